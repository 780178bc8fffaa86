//! The Computer Language Benchmarks Game's `fasta` generator, exactly: its
//! linear-congruential generator (`IM` = 139968, `IA` = 3877, `IC` = 29573, seed
//! 42), its cumulative probability tables, 60 bases a line.
//!
//! `fasta N` writes three sections: `>ONE` repeats the ALU sequence for 2N bases
//! (no random numbers), `>TWO` draws 3N bases from the IUB table and `>THREE`
//! draws 5N bases from the Homo sapiens table, continuing the same generator. So
//! `>THREE` starts after 3N draws, and only `>TWO` and `>THREE` are generated here.
//! A base is the first entry of its table whose cumulative probability (summed in
//! `f64`, in table order, as the C program does) exceeds the draw `last / IM`.

/// The generator's modulus.
pub const IM: u32 = 139_968;
/// The generator's multiplier.
pub const IA: u32 = 3877;
/// The generator's increment.
pub const IC: u32 = 29_573;
/// The generator's seed.
pub const SEED: u32 = 42;
/// Bases per line of output.
pub const LINE: usize = 60;

/// The IUB ambiguity codes and their probabilities (`>TWO`; its draws are only
/// counted when generating `>THREE`, the tests print it).
#[cfg_attr(not(test), allow(dead_code))]
pub const IUB: [(u8, f64); 15] = [
    (b'a', 0.27),
    (b'c', 0.12),
    (b'g', 0.12),
    (b't', 0.27),
    (b'B', 0.02),
    (b'D', 0.02),
    (b'H', 0.02),
    (b'K', 0.02),
    (b'M', 0.02),
    (b'N', 0.02),
    (b'R', 0.02),
    (b'S', 0.02),
    (b'V', 0.02),
    (b'W', 0.02),
    (b'Y', 0.02),
];

/// The Homo sapiens base frequencies (`>THREE`).
pub const HOMO_SAPIENS: [(u8, f64); 4] = [
    (b'a', 0.302_954_942_668_0),
    (b'c', 0.197_988_300_492_1),
    (b'g', 0.197_547_306_639_1),
    (b't', 0.301_509_450_200_8),
];

/// The benchmarks game's random number generator.
#[derive(Clone, Debug)]
pub struct Lcg {
    last: u32,
}

impl Default for Lcg {
    fn default() -> Self {
        Lcg { last: SEED }
    }
}

impl Lcg {
    /// The next draw in `[0, 1)`: `last = (last * IA + IC) % IM; last / IM`.
    pub fn next_unit(&mut self) -> f64 {
        // 139967 * 3877 + 29573 < 2^32: no overflow.
        self.last = (self.last * IA + IC) % IM;
        f64::from(self.last) / f64::from(IM)
    }
}

/// A probability table made cumulative, as the C program's `makeCumulative`.
struct Cumulative {
    bases: Vec<u8>,
    bounds: Vec<f64>,
}

impl Cumulative {
    fn new(table: &[(u8, f64)]) -> Cumulative {
        let mut sum = 0.0;
        let (bases, bounds) = table
            .iter()
            .map(|&(b, p)| {
                sum += p;
                (b, sum)
            })
            .unzip();
        Cumulative { bases, bounds }
    }

    /// The first base whose cumulative probability exceeds `r` (the last one if a
    /// rounding shortfall leaves none).
    fn pick(&self, r: f64) -> u8 {
        let i = self
            .bounds
            .iter()
            .position(|&p| r < p)
            .unwrap_or(self.bases.len() - 1);
        self.bases[i]
    }
}

/// Appends a section: its header line, then `count` random bases from `table`,
/// 60 a line.
fn random_section(
    out: &mut Vec<u8>,
    header: &str,
    table: &[(u8, f64)],
    count: usize,
    rng: &mut Lcg,
) {
    let table = Cumulative::new(table);
    out.extend_from_slice(header.as_bytes());
    out.push(b'\n');
    let mut left = count;
    while left > 0 {
        let line = left.min(LINE);
        out.extend((0..line).map(|_| table.pick(rng.next_unit())));
        out.push(b'\n');
        left -= line;
    }
}

/// Skips `count` draws of a random section (the generator's state after it).
fn skip_section(count: usize, rng: &mut Lcg) {
    for _ in 0..count {
        rng.next_unit();
    }
}

/// The `>TWO` section of `fasta n`, as the program prints it.
#[cfg_attr(not(test), allow(dead_code))]
pub fn section_two(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 * n + 3 * n / LINE + 64);
    random_section(
        &mut out,
        ">TWO IUB ambiguity codes",
        &IUB,
        3 * n,
        &mut Lcg::default(),
    );
    out
}

/// The `>THREE` section of `fasta n`, as the program prints it (lower case).
pub fn section_three(n: usize) -> Vec<u8> {
    let mut rng = Lcg::default();
    skip_section(3 * n, &mut rng);
    let mut out = Vec::with_capacity(5 * n + 5 * n / LINE + 64);
    random_section(
        &mut out,
        ">THREE Homo sapiens frequency",
        &HOMO_SAPIENS,
        5 * n,
        &mut rng,
    );
    out
}

/// What k-nucleotide reads from fasta output: the lines after the `>THREE`
/// header up to the next header, joined and upper-cased. `None` without a
/// `>THREE` section.
pub fn read_three(text: &[u8]) -> Option<Vec<u8>> {
    let mut lines = text.split(|&b| b == b'\n');
    lines.find(|l| l.starts_with(b">THREE"))?;
    let mut seq = Vec::with_capacity(text.len());
    for line in lines.take_while(|l| !l.starts_with(b">")) {
        seq.extend(
            line.iter()
                .filter(|&&b| b != b'\r')
                .map(u8::to_ascii_uppercase),
        );
    }
    Some(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_starts_with_the_values_of_its_recurrence() {
        // last_{i+1} = (last_i * 3877 + 29573) mod 139968, from 42, computed by hand.
        let mut want = 42u64;
        let mut rng = Lcg::default();
        for _ in 0..1000 {
            want = (want * 3877 + 29573) % 139_968;
            assert_eq!(rng.next_unit(), want as f64 / 139_968.0);
        }
        let mut rng = Lcg::default();
        assert_eq!(rng.next_unit(), 52_439.0 / 139_968.0);
        assert_eq!(rng.next_unit(), 102_040.0 / 139_968.0);
    }

    #[test]
    fn small_outputs_match_the_published_fasta_output() {
        // The benchmarks game's `fasta 1000` starts its >TWO section with this line,
        // and `fasta 20` prints this >THREE section.
        let two = section_two(1000);
        let mut lines = two.split(|&b| b == b'\n');
        assert_eq!(lines.next().unwrap(), b">TWO IUB ambiguity codes");
        assert_eq!(
            lines.next().unwrap(),
            b"cttBtatcatatgctaKggNcataaaSatgtaaaDcDRtBggDtctttataattcBgtcg"
        );
        assert_eq!(
            String::from_utf8(section_three(20)).unwrap(),
            ">THREE Homo sapiens frequency\n\
             tacgtgtagcctagtgtttgtgttgcgttatagtctatttgtggacacagtatggtcaaa\n\
             tgacgtcttttgatctgacggcgttaacaaagatactctg\n"
        );
    }

    #[test]
    fn sections_have_60_bases_a_line() {
        let text = section_three(50);
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 1 + 5 + 1, "header, 250 bases in 5 lines, end");
        assert!(lines[1..5].iter().all(|l| l.len() == 60));
        assert_eq!(lines[5].len(), 10);
        assert!(lines[6].is_empty());
    }

    #[test]
    fn base_frequencies_of_a_long_section_match_the_table() {
        let seq = read_three(&section_three(200_000)).unwrap();
        assert_eq!(seq.len(), 1_000_000);
        for (base, p) in HOMO_SAPIENS {
            let upper = base.to_ascii_uppercase();
            let share = seq.iter().filter(|&&b| b == upper).count() as f64 / seq.len() as f64;
            // A binomial share's standard deviation is below 0.0005 here.
            assert!(
                (share - p).abs() < 0.002,
                "{}: {share} vs {p}",
                upper as char
            );
        }
        let two = section_two(100_000);
        let bases: Vec<u8> = two
            .split(|&b| b == b'\n')
            .skip(1)
            .flatten()
            .copied()
            .collect();
        for (base, p) in IUB {
            let share = bases.iter().filter(|&&b| b == base).count() as f64 / bases.len() as f64;
            assert!(
                (share - p).abs() < 0.003,
                "{}: {share} vs {p}",
                base as char
            );
        }
    }

    #[test]
    fn reading_three_joins_its_lines_upper_cased_and_stops_at_the_next_header() {
        let text = b">ONE x\nAAAA\n>THREE y\nacg\nT\n>FOUR\nGG\n";
        assert_eq!(read_three(text).unwrap(), b"ACGT");
        assert_eq!(read_three(b">ONE\nacgt\n"), None);
    }
}
