//! k-nucleotide, from the Computer Language Benchmarks Game: count every k-mer
//! of the `>THREE` section of `fasta N`'s output for k = 1, 2, 3, 4, 6, 12 and 18
//! and print the game's report (see [`count::report`]).
//!
//! The input is generated in process by the game's own generator ([`fasta`]) and
//! read as the program reads its standard input (untimed). A run packs the
//! sequence two bits a base, counts, and writes the report; `seq` does it in
//! plain loops; `sumac` and `rayon` pack in a parallel loop, run one task per k
//! (a parallel loop over the k's, longest first) and split each k's positions with a parallel
//! `fold` into per-piece tables that `reduce` merges (the smaller into the
//! larger). The split points are the scheduler's: the code has no grain size.
//! Every run's report must equal `seq`'s byte for byte.

pub mod count;
pub mod fasta;

use std::sync::OnceLock;
use std::time::Instant;

use crate::impls::{Ctx, Impl};
use crate::report::fmt_count;
use crate::workloads::{checksum, Workload};
use count::{count_into, pack_word, packed_words, report, Packed, Table, FRAMES};

/// Generates the parallel k-nucleotide kernel for a crate with Rayon's API.
macro_rules! par_kernel {
    ($module:ident, $krate:ident) => {
        #[doc = concat!("k-nucleotide on `", stringify!($krate), "`'s parallel iterators.")]
        pub mod $module {
            use super::count::{bump, merge, pack_word, Packed, Table, FRAMES};
            use $krate::prelude::*;

            /// Packs `seq` into `words` and counts its k-mers: one table per frame.
            pub fn count(seq: &[u8], words: &mut [u64]) -> Vec<Table> {
                let len = seq.len();
                words.par_iter_mut().enumerate().for_each(move |(j, w)| {
                    let start = (j * 32).min(len);
                    *w = pack_word(&seq[start..(start + 32).min(len)]);
                });
                let packed = Packed::new(words, len);
                // A piece's table is boxed: `fold` passes its accumulator by value
                // from item to item, and a pointer stays in a register where the
                // table itself would be copied through memory every time. The
                // closure owns copies of `packed` and `k` (`move`): read through
                // references, they were reloaded for every position. The frames run
                // longest first (k = 18 has the largest table), so the short ones
                // fill the end and the positions split off there are of small
                // tables, cheap to merge.
                let mut tables: Vec<Table> = FRAMES
                    .par_iter()
                    .rev()
                    .map(|&k| {
                        *(0..packed.positions(k))
                            .into_par_iter()
                            .fold(Box::<Table>::default, move |mut table, i| {
                                bump(&mut table, packed.kmer(i, k));
                                table
                            })
                            .reduce(Box::<Table>::default, |a, b| Box::new(merge(*a, *b)))
                    })
                    .collect();
                tables.reverse();
                tables
            }
        }
    };
}

par_kernel!(rayon_kernel, rayon);
par_kernel!(sumac_kernel, sumac);

/// The sequential program: packs `seq` into `words` and counts each frame in turn.
pub fn count_seq(seq: &[u8], words: &mut [u64]) -> Vec<Table> {
    for (j, w) in words.iter_mut().enumerate() {
        let start = (j * 32).min(seq.len());
        *w = pack_word(&seq[start..(start + 32).min(seq.len())]);
    }
    let packed = Packed::new(words, seq.len());
    FRAMES
        .iter()
        .map(|&k| {
            let mut table = Table::default();
            count_into(&mut table, packed, k, 0..packed.positions(k));
            table
        })
        .collect()
}

/// The k-nucleotide workload over the `>THREE` section of `fasta n`.
pub struct KNucleotide {
    seq: Vec<u8>,
    notes: Vec<String>,
    /// `seq`'s report: the first one checked (the harness runs `seq` first).
    reference: OnceLock<String>,
}

/// Scratch space of a run: the packed sequence and the report written.
pub struct State {
    words: Vec<u64>,
    output: String,
}

impl KNucleotide {
    /// Generates `fasta n`'s `>THREE` section and reads it as k-nucleotide does.
    pub fn new(n: usize) -> KNucleotide {
        let t0 = Instant::now();
        let text = fasta::section_three(n);
        let seq = fasta::read_three(&text).expect("the section has its header");
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let note = format!(
            "input: the >THREE section of fasta {} ({} bases), generated and read in {ms:.0} ms (untimed)",
            fmt_count(n as u64),
            fmt_count(seq.len() as u64)
        );
        KNucleotide::from_sequence(seq, vec![note])
    }

    /// The workload over an upper-case sequence of A, C, G and T.
    pub fn from_sequence(seq: Vec<u8>, notes: Vec<String>) -> KNucleotide {
        KNucleotide {
            seq,
            notes,
            reference: OnceLock::new(),
        }
    }

    /// The report `seq` writes (one untimed sequential run).
    pub fn seq_report(&self) -> String {
        let mut words = vec![0; packed_words(self.seq.len())];
        report(&count_seq(&self.seq, &mut words), self.seq.len())
    }
}

impl Workload for KNucleotide {
    type State = State;

    fn new_state(&self) -> State {
        State {
            words: vec![0; packed_words(self.seq.len())],
            output: String::new(),
        }
    }

    fn reset(&self, state: &mut State) {
        state.output.clear();
    }

    fn supports(imp: Impl) -> bool {
        matches!(imp, Impl::Seq | Impl::Sumac | Impl::Rayon)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut State, _: u64) -> u64 {
        let tables: Vec<Table> = match ctx {
            Ctx::Seq => count_seq(&self.seq, &mut state.words),
            Ctx::Sumac => sumac_kernel::count(&self.seq, &mut state.words),
            Ctx::Rayon { .. } => rayon_kernel::count(&self.seq, &mut state.words),
            _ => unreachable!("k-nucleotide runs only as seq, sumac or rayon"),
        };
        state.output = report(&tables, self.seq.len());
        state.output.len() as u64
    }

    fn check(&self, state: &State, _: u64) -> u64 {
        let reference = self.reference.get_or_init(|| state.output.clone());
        let want = checksum(reference.bytes().map(u64::from));
        if state.output == *reference {
            return want;
        }
        let line = reference
            .lines()
            .zip(state.output.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "its length".to_string(), |i| format!("line {}", i + 1));
        eprintln!("k-nucleotide: the report differs from seq's at {line}");
        !want
    }

    fn input_notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::count::{decode, encode};
    use super::*;
    use crate::workloads::SplitMix64;
    use std::collections::BTreeMap;

    /// Counts every k-mer by slicing the text at every position: a count that
    /// shares nothing with the packed tables.
    fn naive(seq: &[u8], k: usize) -> BTreeMap<String, u32> {
        let mut m = BTreeMap::new();
        if seq.len() >= k {
            for i in 0..=seq.len() - k {
                *m.entry(String::from_utf8(seq[i..i + k].to_vec()).unwrap())
                    .or_insert(0) += 1;
            }
        }
        m
    }

    fn as_text(table: &Table, k: usize) -> BTreeMap<String, u32> {
        table.iter().map(|(&key, &n)| (decode(key, k), n)).collect()
    }

    fn random_seq(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = SplitMix64::new(seed);
        // Mostly A and T, so long k-mers repeat too.
        (0..len)
            .map(|_| b"AATTACGT"[rng.below(8) as usize])
            .collect()
    }

    #[test]
    fn every_kmer_of_small_inputs_is_counted_as_a_naive_count_says() {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let rayon_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (len, seed) in [
            (0, 1),
            (1, 2),
            (17, 3),
            (18, 4),
            (31, 5),
            (64, 6),
            (65, 7),
            (1000, 8),
            (5000, 9),
        ] {
            let seq = random_seq(len, seed);
            let mut words = vec![0; packed_words(len)];
            let tables = [
                count_seq(&seq, &mut words),
                pool.install(|| sumac_kernel::count(&seq, &mut words)),
                rayon_pool.install(|| rayon_kernel::count(&seq, &mut words)),
            ];
            for (i, &k) in FRAMES.iter().enumerate() {
                let want = naive(&seq, k);
                for t in &tables {
                    assert_eq!(as_text(&t[i], k), want, "len {len}, k {k}");
                }
            }
        }
    }

    #[test]
    fn the_report_has_the_benchmarks_game_format() {
        let seq = b"GGTATTTTAATTTATAGTGGTA".to_vec();
        let mut words = vec![0; packed_words(seq.len())];
        let out = report(&count_seq(&seq, &mut words), seq.len());
        // 22 bases: T 11, A 6, G 5 (and no C); 21 dimers: TA and TT 5 each, AT
        // and GT 3, GG 2, AA, AG and TG 1; GGT at 0 and 18.
        let want = "T 50.000\nA 27.273\nG 22.727\n\n\
                    TA 23.810\nTT 23.810\nAT 14.286\nGT 14.286\nGG 9.524\nAA 4.762\nAG 4.762\nTG 4.762\n\n\
                    2\tGGT\n2\tGGTA\n1\tGGTATT\n1\tGGTATTTTAATT\n1\tGGTATTTTAATTTATAGT\n";
        assert_eq!(out, want);
        assert_eq!(encode("GGT"), encode("GGTA") & 0x3f);
    }

    #[test]
    fn every_implementation_writes_seq_s_report_and_a_wrong_one_is_caught() {
        let w = KNucleotide::new(2000);
        let mut state = w.new_state();
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        w.run(&mut Ctx::Seq, &mut state, 0);
        let want = w.check(&state, 0);
        pool.install(|| w.run(&mut Ctx::Sumac, &mut state, 0));
        assert_eq!(w.check(&state, 0), want);
        w.run(&mut Ctx::Rayon { min_len: 1 }, &mut state, 0);
        assert_eq!(w.check(&state, 0), want);
        state.output = state.output.replacen("GGT", "GGA", 1);
        assert_ne!(w.check(&state, 0), want);
    }

    /// The benchmarks game's published output for N = 2,500,000 (slow in a debug
    /// build: `cargo test --release -p sumac-bench -- --ignored`).
    #[test]
    #[ignore]
    fn the_report_for_the_default_size_is_the_published_one() {
        let want = "A 30.297\nT 30.151\nC 19.798\nG 19.755\n\n\
                    AA 9.177\nTA 9.133\nAT 9.131\nTT 9.091\nCA 6.002\nAC 6.001\nAG 5.987\nGA 5.984\n\
                    CT 5.971\nTC 5.971\nGT 5.957\nTG 5.956\nCC 3.917\nGC 3.910\nCG 3.909\nGG 3.903\n\n\
                    147166\tGGT\n44658\tGGTA\n4736\tGGTATT\n89\tGGTATTTTAATT\n89\tGGTATTTTAATTTATAGT\n";
        assert_eq!(KNucleotide::new(2_500_000).seq_report(), want);
    }
}
