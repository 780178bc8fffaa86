//! Parallel iterators over the parts of a string: `par_chars`, `par_char_indices`,
//! `par_bytes`, `par_encode_utf16`, `par_lines`, `par_split_whitespace`, `par_split`,
//! `par_split_terminator`, `par_split_inclusive`, `par_matches`, `par_match_indices`.
//!
//! A loop over a string runs over its *byte positions* (see [`super::parts`]): each kind
//! of part below says where parts start (a char at each char boundary, a line after each
//! `\n`, a word after whitespace, a piece after each separator, a match at each matching
//! char) and runs the `str` method's own iterator from a part start. So the parts come
//! out in the string's order, equal to what the `str` method yields.
//!
//! ```
//! use sumac::prelude::*;
//! let text = "one two\nthree four five\n";
//! assert_eq!(text.par_lines().count(), 2);
//! assert_eq!(text.par_split_whitespace().map(str::len).sum::<usize>(), 19);
//! let vowels = text.par_chars().filter(|c| "aeiou".contains(*c)).count();
//! assert_eq!(vowels, 9);
//! ```

use std::ops::{Range, RangeBounds};

use either::Either;

use super::parts::{parts_iterator, PartKind};
use super::plumbing::UnindexedConsumer;
use super::vec::{resolve_range, ParallelDrainRange};
use super::{slice, Copied, IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Parallel methods on string slices.
pub trait ParallelString {
    /// The string the methods work on. Implement it to give a type of your own the
    /// parallel string methods.
    ///
    /// ```
    /// use sumac::prelude::*;
    ///
    /// struct Note {
    ///     title: String,
    ///     body: String,
    /// }
    ///
    /// impl ParallelString for Note {
    ///     fn as_parallel_string(&self) -> &str {
    ///         &self.body
    ///     }
    /// }
    ///
    /// let note = Note { title: "todo".into(), body: "buy milk\ncall bob\n".into() };
    /// assert_eq!(note.par_lines().count(), 2);
    /// assert_eq!(note.par_split_whitespace().count(), 4); // the title is not searched
    /// assert_eq!(note.title, "todo");
    /// assert_eq!("abc".as_parallel_string(), "abc");
    /// ```
    fn as_parallel_string(&self) -> &str;

    /// The chars of the string, in order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let upper: String = "héllo".par_chars().map(|c| c.to_ascii_uppercase()).collect();
    /// assert_eq!(upper, "HéLLO");
    /// ```
    fn par_chars(&self) -> Chars<'_> {
        Chars {
            text: self.as_parallel_string(),
        }
    }

    /// The chars of the string with their byte positions, in order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<(usize, char)> = "aé b".par_char_indices().collect();
    /// assert_eq!(v, [(0, 'a'), (1, 'é'), (3, ' '), (4, 'b')]);
    /// ```
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            text: self.as_parallel_string(),
        }
    }

    /// The bytes of the string, in order (an indexed iterator).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!("abc".par_bytes().map(u32::from).sum::<u32>(), 294);
    /// ```
    fn par_bytes(&self) -> Bytes<'_> {
        self.as_parallel_string()
            .as_bytes()
            .into_par_iter()
            .copied()
    }

    /// The pieces between separators, like [`str::split`] with a char pattern: a `char`,
    /// a slice or array of chars, or a `Fn(char) -> bool`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "a,b,,c".par_split(',').collect();
    /// assert_eq!(v, ["a", "b", "", "c"]);
    /// let v: Vec<&str> = "a-b_c".par_split(['-', '_']).collect();
    /// assert_eq!(v, ["a", "b", "c"]);
    /// ```
    fn par_split<P: Pattern>(&self, separator: P) -> Split<'_, P> {
        Split {
            text: self.as_parallel_string(),
            separator,
        }
    }

    /// The pieces ended by terminators, like [`str::split_terminator`]: as
    /// [`par_split`](ParallelString::par_split), without an empty last piece.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "a;b;".par_split_terminator(';').collect();
    /// assert_eq!(v, ["a", "b"]);
    /// ```
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitTerminator {
            text: self.as_parallel_string(),
            terminator,
        }
    }

    /// The pieces ended by separators, each with its separator, like
    /// [`str::split_inclusive`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "a\nb\nc".par_split_inclusive('\n').collect();
    /// assert_eq!(v, ["a\n", "b\n", "c"]);
    /// ```
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitInclusive {
            text: self.as_parallel_string(),
            separator,
        }
    }

    /// The chars that match `pattern`, as string slices, like [`str::matches`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "a1b22c".par_matches(|c: char| c.is_ascii_digit()).collect();
    /// assert_eq!(v, ["1", "2", "2"]);
    /// ```
    fn par_matches<P: Pattern>(&self, pattern: P) -> Matches<'_, P> {
        Matches {
            text: self.as_parallel_string(),
            pattern,
        }
    }

    /// The chars that match `pattern` with their byte positions, like
    /// [`str::match_indices`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<(usize, &str)> = "aé,b,".par_match_indices(',').collect();
    /// assert_eq!(v, [(3, ","), (5, ",")]);
    /// ```
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            text: self.as_parallel_string(),
            pattern,
        }
    }

    /// The string as UTF-16 code units, like [`str::encode_utf16`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u16> = "a\u{1F600}".par_encode_utf16().collect();
    /// assert_eq!(v, "a\u{1F600}".encode_utf16().collect::<Vec<_>>());
    /// ```
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16 {
            chars: self.par_chars(),
        }
    }

    /// The lines of the string, like [`str::lines`] (without their `\n` or `\r\n`).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "a\r\nb\n\nc".par_lines().collect();
    /// assert_eq!(v, ["a", "b", "", "c"]);
    /// ```
    fn par_lines(&self) -> Lines<'_> {
        Lines {
            text: self.as_parallel_string(),
        }
    }

    /// The words of the string, like [`str::split_whitespace`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = "  a  bc\td ".par_split_whitespace().collect();
    /// assert_eq!(v, ["a", "bc", "d"]);
    /// ```
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        SplitWhitespace {
            text: self.as_parallel_string(),
        }
    }

    /// The words of the string between ASCII whitespace, like
    /// [`str::split_ascii_whitespace`] (other Unicode spaces stay inside words).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<&str> = " a\u{a0}b \tc ".par_split_ascii_whitespace().collect();
    /// assert_eq!(v, ["a\u{a0}b", "c"]);
    /// ```
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        SplitAsciiWhitespace {
            text: self.as_parallel_string(),
        }
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}

/// The char patterns accepted by [`ParallelString::par_split`] and
/// [`par_split_terminator`](ParallelString::par_split_terminator) (sealed).
pub trait Pattern: Sync + Send + private::Sealed {
    /// Whether `c` is a separator.
    fn is_separator(&self, c: char) -> bool;
}

mod private {
    /// Prevents implementations outside this crate.
    pub trait Sealed {}
}

impl private::Sealed for char {}
impl Pattern for char {
    fn is_separator(&self, c: char) -> bool {
        *self == c
    }
}

impl private::Sealed for &[char] {}
impl Pattern for &[char] {
    fn is_separator(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> private::Sealed for [char; N] {}
impl<const N: usize> Pattern for [char; N] {
    fn is_separator(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> private::Sealed for &[char; N] {}
impl<const N: usize> Pattern for &[char; N] {
    fn is_separator(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<F: Fn(char) -> bool + Sync + Send> private::Sealed for F {}
impl<F: Fn(char) -> bool + Sync + Send> Pattern for F {
    fn is_separator(&self, c: char) -> bool {
        self(c)
    }
}

/// The iterator returned by [`ParallelString::par_bytes`].
pub type Bytes<'a> = Copied<slice::Iter<'a, u8>>;

// ------------------------------------------------------------------- the machinery

/// The first char boundary at or after `pos`.
fn ceil_boundary(text: &str, mut pos: usize) -> usize {
    while !text.is_char_boundary(pos) {
        pos += 1;
    }
    pos
}

/// The last char boundary at or before `pos`.
fn floor_boundary(text: &str, mut pos: usize) -> usize {
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    pos
}

/// Where `part`, a slice of `text`, starts in it (comparing addresses only).
fn start_in(text: &str, part: &str) -> usize {
    part.as_ptr().addr() - text.as_ptr().addr()
}

#[derive(Clone, Copy)]
struct CharsKind;
impl<'a> PartKind<&'a str> for CharsKind {
    type Part = char;
    #[inline]
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        Some(ceil_boundary(text, lo)).filter(|&start| start < hi)
    }
    #[inline]
    fn parts_from(self, text: &'a str, from: usize) -> impl Iterator<Item = (usize, char)> {
        text[from..].char_indices().map(move |(i, c)| (from + i, c))
    }
    /// The chars of the block's slice, with no position check per char.
    #[inline]
    fn parts_in(self, text: &'a str, lo: usize, hi: usize) -> impl Iterator<Item = char> {
        text[ceil_boundary(text, lo)..ceil_boundary(text, hi)].chars()
    }
}

#[derive(Clone, Copy)]
struct CharIndicesKind;
impl<'a> PartKind<&'a str> for CharIndicesKind {
    type Part = (usize, char);
    #[inline]
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        CharsKind.first_start(text, lo, hi)
    }
    #[inline]
    fn parts_from(
        self,
        text: &'a str,
        from: usize,
    ) -> impl Iterator<Item = (usize, (usize, char))> {
        CharsKind.parts_from(text, from).map(|(i, c)| (i, (i, c)))
    }
    #[inline]
    fn parts_in(self, text: &'a str, lo: usize, hi: usize) -> impl Iterator<Item = (usize, char)> {
        let from = ceil_boundary(text, lo);
        text[from..ceil_boundary(text, hi)]
            .char_indices()
            .map(move |(i, c)| (from + i, c))
    }
}

#[derive(Clone, Copy)]
struct LinesKind;
impl<'a> PartKind<&'a str> for LinesKind {
    type Part = &'a str;
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        if lo == 0 {
            return Some(0);
        }
        // A line starts right after each `\n` (except one at the very end).
        let newline = text.as_bytes()[lo - 1..hi - 1]
            .iter()
            .position(|&b| b == b'\n')?;
        Some(lo + newline)
    }
    fn parts_from(self, text: &'a str, from: usize) -> impl Iterator<Item = (usize, &'a str)> {
        text[from..]
            .lines()
            .map(move |line| (start_in(text, line), line))
    }
}

#[derive(Clone, Copy)]
struct WordsKind<const ASCII: bool>;
impl<const ASCII: bool> WordsKind<ASCII> {
    /// Whether `c` separates words: any Unicode whitespace, or only ASCII whitespace.
    fn is_space(c: char) -> bool {
        if ASCII {
            c.is_ascii_whitespace()
        } else {
            c.is_whitespace()
        }
    }
}
impl<'a, const ASCII: bool> PartKind<&'a str> for WordsKind<ASCII> {
    type Part = &'a str;
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        let from = ceil_boundary(text, lo);
        // Inside a word that started before `lo`: no word starts until whitespace.
        let mut in_word = text[..from]
            .chars()
            .next_back()
            .is_some_and(|c| !Self::is_space(c));
        for (i, c) in text[from..].char_indices() {
            if from + i >= hi {
                return None;
            }
            if Self::is_space(c) {
                in_word = false;
            } else if !in_word {
                return Some(from + i);
            }
        }
        None
    }
    fn parts_from(self, text: &'a str, from: usize) -> impl Iterator<Item = (usize, &'a str)> {
        let rest = &text[from..];
        let words = if ASCII {
            Either::Left(rest.split_ascii_whitespace())
        } else {
            Either::Right(rest.split_whitespace())
        };
        words.map(move |word| (start_in(text, word), word))
    }
}

/// How `PiecesKind` cuts: `par_split`, `par_split_terminator`, `par_split_inclusive`.
const SPLIT: u8 = 0;
const TERMINATED: u8 = 1;
const INCLUSIVE: u8 = 2;

/// The pieces between separators (`MODE` is [`SPLIT`], [`TERMINATED`] or [`INCLUSIVE`]).
struct PiecesKind<'p, P, const MODE: u8>(&'p P);
impl<P, const MODE: u8> Clone for PiecesKind<'_, P, MODE> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, const MODE: u8> Copy for PiecesKind<'_, P, MODE> {}

impl<'a, P: Pattern, const MODE: u8> PartKind<&'a str> for PiecesKind<'_, P, MODE> {
    type Part = &'a str;
    fn positions(text: &'a str) -> usize {
        // A split string also has a (possibly empty) piece after its last separator.
        if MODE == SPLIT {
            text.len() + 1
        } else {
            text.len()
        }
    }
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        if lo == 0 {
            return Some(0);
        }
        // A piece starts where a separator ends. The char that holds byte `lo - 1` is the
        // first one that can end at `lo` or later.
        let from = floor_boundary(text, lo - 1);
        for (i, c) in text[from..].char_indices() {
            let end = from + i + c.len_utf8();
            if end >= hi {
                return None;
            }
            if self.0.is_separator(c) {
                return Some(end);
            }
        }
        None
    }
    fn parts_from(self, text: &'a str, from: usize) -> impl Iterator<Item = (usize, &'a str)> {
        // `split_terminator` differs from `split` only in its last, empty piece, which
        // starts at `text.len()`: outside its positions, so never asked for.
        let separator = self.0;
        let rest = &text[from..];
        let pieces = if MODE == INCLUSIVE {
            Either::Left(rest.split_inclusive(move |c| separator.is_separator(c)))
        } else {
            Either::Right(rest.split(move |c| separator.is_separator(c)))
        };
        pieces.map(move |piece| (start_in(text, piece), piece))
    }
}

/// `par_matches` and `par_match_indices`: the matching chars themselves.
struct MatchesKind<'p, P>(&'p P);
impl<P> Clone for MatchesKind<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for MatchesKind<'_, P> {}

impl<'a, P: Pattern> PartKind<&'a str> for MatchesKind<'_, P> {
    type Part = (usize, &'a str);
    fn first_start(self, text: &'a str, lo: usize, hi: usize) -> Option<usize> {
        let from = ceil_boundary(text, lo);
        let (i, _) = text[from..]
            .char_indices()
            .take_while(|&(i, _)| from + i < hi)
            .find(|&(_, c)| self.0.is_separator(c))?;
        Some(from + i)
    }
    fn parts_from(
        self,
        text: &'a str,
        from: usize,
    ) -> impl Iterator<Item = (usize, (usize, &'a str))> {
        let pattern = self.0;
        text[from..]
            .match_indices(move |c| pattern.is_separator(c))
            .map(move |(i, m)| (from + i, (from + i, m)))
    }
}

parts_iterator!(
    /// The iterator returned by [`ParallelString::par_chars`].
    Chars<'a> { text: &'a str } where [] => char, |_this| CharsKind
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_char_indices`].
    CharIndices<'a> { text: &'a str } where [] => (usize, char), |_this| CharIndicesKind
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_lines`].
    Lines<'a> { text: &'a str } where [] => &'a str, |_this| LinesKind
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_split_whitespace`].
    SplitWhitespace<'a> { text: &'a str } where [] => &'a str, |_this| WordsKind::<false>
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_split_ascii_whitespace`].
    SplitAsciiWhitespace<'a> { text: &'a str } where [] => &'a str, |_this| WordsKind::<true>
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_split`].
    Split<'a, P: Pattern> { text: &'a str, separator: P } where [] => &'a str,
    |this| PiecesKind::<P, SPLIT>(&this.separator)
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_split_terminator`].
    SplitTerminator<'a, P: Pattern> { text: &'a str, terminator: P } where [] => &'a str,
    |this| PiecesKind::<P, TERMINATED>(&this.terminator)
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_split_inclusive`].
    SplitInclusive<'a, P: Pattern> { text: &'a str, separator: P } where [] => &'a str,
    |this| PiecesKind::<P, INCLUSIVE>(&this.separator)
);
parts_iterator!(
    /// The iterator returned by [`ParallelString::par_match_indices`].
    MatchIndices<'a, P: Pattern> { text: &'a str, pattern: P } where [] => (usize, &'a str),
    |this| MatchesKind(&this.pattern)
);

/// The iterator returned by [`ParallelString::par_matches`].
#[derive(Clone, Debug)]
pub struct Matches<'a, P> {
    text: &'a str,
    pattern: P,
}

impl<'a, P: Pattern> ParallelIterator for Matches<'a, P> {
    type Item = &'a str;
    fn drive_unindexed<C: UnindexedConsumer<&'a str>>(self, consumer: C) -> C::Result {
        MatchIndices {
            text: self.text,
            pattern: self.pattern,
        }
        .map(|(_, m)| m)
        .drive_unindexed(consumer)
    }
    fn index_span(&self) -> usize {
        self.text.len()
    }
}

/// The iterator returned by [`ParallelString::par_encode_utf16`].
#[derive(Clone, Debug)]
pub struct EncodeUtf16<'a> {
    chars: Chars<'a>,
}

impl ParallelIterator for EncodeUtf16<'_> {
    type Item = u16;
    fn drive_unindexed<C: UnindexedConsumer<u16>>(self, consumer: C) -> C::Result {
        self.chars
            .flat_map_iter(|c| {
                let mut units = [0u16; 2];
                let n = c.encode_utf16(&mut units).len();
                units.into_iter().take(n)
            })
            .drive_unindexed(consumer)
    }
    fn index_span(&self) -> usize {
        self.chars.index_span()
    }
}

impl<'a> ParallelDrainRange<usize> for &'a mut String {
    type Iter = Drain<'a>;
    type Item = char;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a> {
        let range = resolve_range(range, self.len(), "string");
        for (which, at) in [("start", range.start), ("end", range.end)] {
            assert!(
                self.is_char_boundary(at),
                "range {which} {at} is not on a char boundary of the string"
            );
        }
        Drain {
            string: self,
            range,
        }
    }
}

/// A parallel iterator over the chars of a range of a `String`, which it removes (from
/// [`par_drain`](crate::iter::ParallelDrainRange::par_drain) on a string), as Rayon's
/// does: the chars are read in place, as [`par_chars`](ParallelString::par_chars) reads
/// them, and the range is removed from the string when the iterator is done (or dropped
/// unused, or a closure panicked). If the iterator is leaked (`mem::forget`), the string
/// keeps the range.
///
/// ```
/// use sumac::prelude::*;
///
/// let mut text = String::from("año: 2024");
/// let drain: sumac::string::Drain<'_> = text.par_drain(..6);
/// assert_eq!(drain.filter(|c| c.is_alphabetic()).collect::<String>(), "año");
/// assert_eq!(text, "2024");
/// ```
#[derive(Debug)]
pub struct Drain<'a> {
    string: &'a mut String,
    range: Range<usize>,
}

impl Drain<'_> {
    /// The chars to yield.
    fn chars(&self) -> Chars<'_> {
        self.string[self.range.clone()].par_chars()
    }
}

impl ParallelIterator for Drain<'_> {
    type Item = char;
    fn drive_unindexed<C: UnindexedConsumer<char>>(self, consumer: C) -> C::Result {
        self.chars().drive_unindexed(consumer)
    }
    fn index_span(&self) -> usize {
        self.chars().index_span()
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        self.string.replace_range(self.range.clone(), "");
    }
}
