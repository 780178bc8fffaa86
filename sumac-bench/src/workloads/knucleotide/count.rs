//! Counting k-mers: the sequence packed two bits a base, one hash table per k
//! from a packed k-mer (`u64`) to its count, and the benchmarks game's output.
//!
//! Packing: base `i` occupies bits `2 (i mod 32)` of word `i / 32` (A, C, G, T
//! = 0, 1, 2, 3), and one zero word follows the last, so the k-mer at any
//! position is two word loads and a shift ([`Packed::kmer`]): no rolling state,
//! so a piece of positions can start anywhere, which is what lets a parallel
//! loop split the positions wherever it likes. A k-mer's key holds its first base
//! in the lowest bits; keys are compared only through [`decode`].

use std::collections::HashMap;
use std::fmt::Write as _;

/// The k-mer lengths counted, in the benchmarks game's order.
pub const FRAMES: [usize; 7] = [1, 2, 3, 4, 6, 12, 18];

/// The k-mers whose counts are printed, after the frequency tables of k = 1, 2.
pub const WANTED: [&str; 5] = [
    "GGT",
    "GGTA",
    "GGTATT",
    "GGTATTTTAATT",
    "GGTATTTTAATTTATAGT",
];

/// Bases a packed word holds.
const PER_WORD: usize = 32;

/// A table of k-mer counts: packed k-mer to count, hashed with foldhash (a fast
/// hash of good quality for integer keys).
pub type Table = HashMap<u64, u32, foldhash::fast::FixedState>;

/// The 2-bit code of every byte: A, C, G, T = 0, 1, 2, 3 (anything else counts
/// as `A`). A table, not a `match`: bases are random, so branches would miss.
const CODES: [u8; 256] = {
    let mut t = [0; 256];
    t[b'C' as usize] = 1;
    t[b'G' as usize] = 2;
    t[b'T' as usize] = 3;
    t
};

/// The 2-bit code of an upper-case base.
#[inline]
fn code(base: u8) -> u64 {
    u64::from(CODES[usize::from(base)])
}

/// The bases of `word`'s slice of the sequence, packed (`bases.len() <= 32`).
#[inline]
pub fn pack_word(bases: &[u8]) -> u64 {
    bases
        .iter()
        .enumerate()
        .fold(0, |w, (i, &b)| w | code(b) << (2 * i))
}

/// The number of words (with the trailing zero word) that pack `len` bases.
pub fn packed_words(len: usize) -> usize {
    len.div_ceil(PER_WORD) + 1
}

/// A sequence packed two bits a base, borrowed from a run's scratch space.
#[derive(Clone, Copy)]
pub struct Packed<'a> {
    words: &'a [u64],
    len: usize,
}

impl<'a> Packed<'a> {
    /// `words` as packed by [`pack_word`] from `len` bases; `words` has
    /// [`packed_words`]`(len)` words, the last one zero.
    pub fn new(words: &'a [u64], len: usize) -> Packed<'a> {
        assert_eq!(words.len(), packed_words(len), "one trailing zero word");
        Packed { words, len }
    }

    /// Positions a k-mer can start at.
    pub fn positions(&self, k: usize) -> usize {
        (self.len + 1).saturating_sub(k)
    }

    /// The k-mer starting at base `i` (`i + k <= len`, `k <= 32`).
    #[inline]
    pub fn kmer(&self, i: usize, k: usize) -> u64 {
        let (w, shift) = (i / PER_WORD, 2 * (i % PER_WORD));
        let pair = u128::from(self.words[w]) | u128::from(self.words[w + 1]) << 64;
        (pair >> shift) as u64 & mask(k)
    }
}

/// The low `2k` bits.
#[inline]
fn mask(k: usize) -> u64 {
    if k >= 32 {
        u64::MAX
    } else {
        (1 << (2 * k)) - 1
    }
}

/// The key of a k-mer written as text (upper-case bases).
pub fn encode(text: &str) -> u64 {
    pack_word(text.as_bytes())
}

/// The text of a key of length `k`.
pub fn decode(key: u64, k: usize) -> String {
    (0..k)
        .map(|i| char::from(b"ACGT"[(key >> (2 * i) & 3) as usize]))
        .collect()
}

/// Adds one to `key`'s count.
#[inline]
pub fn bump(table: &mut Table, key: u64) {
    *table.entry(key).or_insert(0) += 1;
}

/// Counts the k-mers starting at `positions` into `table`.
pub fn count_into(
    table: &mut Table,
    packed: Packed<'_>,
    k: usize,
    positions: std::ops::Range<usize>,
) {
    for i in positions {
        bump(table, packed.kmer(i, k));
    }
}

/// Adds the counts of two tables, inserting the smaller into the larger.
pub fn merge(a: Table, b: Table) -> Table {
    let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    for (key, n) in small {
        *big.entry(key).or_insert(0) += n;
    }
    big
}

/// The benchmarks game's output for `tables` (one per entry of [`FRAMES`]):
/// the frequencies of the 1-mers and 2-mers (percent of the k-mers, three
/// decimals, by descending count then by text), each table followed by an empty
/// line, then `count\tk-mer` for each of [`WANTED`].
pub fn report(tables: &[Table], len: usize) -> String {
    let mut out = String::new();
    for (k, table) in FRAMES.iter().zip(tables).take(2) {
        let total = (len + 1).saturating_sub(*k) as f64;
        let mut rows: Vec<(String, u32)> = table
            .iter()
            .map(|(&key, &n)| (decode(key, *k), n))
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (text, n) in rows {
            let _ = writeln!(out, "{text} {:.3}", 100.0 * f64::from(n) / total);
        }
        out.push('\n');
    }
    for text in WANTED {
        let k = text.len();
        let table = FRAMES
            .iter()
            .position(|&f| f == k)
            .map(|i| &tables[i])
            .expect("every wanted length is counted");
        let n = table.get(&encode(text)).copied().unwrap_or(0);
        let _ = writeln!(out, "{n}\t{text}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_their_text() {
        for text in [
            "A",
            "GT",
            "GGTATTTTAATTTATAGT",
            "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT",
        ] {
            assert_eq!(decode(encode(text), text.len()), text);
        }
    }

    #[test]
    fn a_kmer_read_across_a_word_boundary_is_the_kmer_of_its_text() {
        let seq: Vec<u8> = (0..200).map(|i| b"ACGT"[(i * 7 + i / 5) % 4]).collect();
        let mut words = vec![0; packed_words(seq.len())];
        for (j, w) in words.iter_mut().enumerate() {
            *w = pack_word(&seq[(j * 32).min(seq.len())..((j + 1) * 32).min(seq.len())]);
        }
        let packed = Packed::new(&words, seq.len());
        for k in [1, 5, 18, 32] {
            assert_eq!(packed.positions(k), 201 - k);
            for i in 0..packed.positions(k) {
                let text = std::str::from_utf8(&seq[i..i + k]).unwrap();
                assert_eq!(packed.kmer(i, k), encode(text), "k {k} at {i}");
            }
        }
    }
}
