//! `with_min_len(min)`: however a loop splits (at heartbeats, eagerly for expensive items,
//! or forced by the test hook), every fold piece holds at least `min` items unless the
//! whole input is shorter, both for sumac's own consumers (one folder runs through the
//! blocks until a split detaches it) and for a consumer written for Rayon (one piece per
//! block).

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};

use proptest::prelude::*;
use sumac::iter::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use sumac::prelude::*;

use common::{forced_split_pool, on_each, stress_pools};

/// The pieces of `0..len` that `fold` sees under `with_min_len(min)`.
fn fold_pieces(len: usize, min: usize) -> Vec<Vec<usize>> {
    (0..len)
        .into_par_iter()
        .with_min_len(min)
        .fold(Vec::new, |mut piece, x| {
            piece.push(x);
            piece
        })
        .collect()
}

/// A consumer written as for Rayon (no `DETACHES`): each folder collects its items as one
/// piece, and the reducer concatenates the lists of pieces in order.
#[derive(Clone, Copy)]
struct Pieces;

struct PiecesFolder(Vec<usize>);

struct Concat;

impl Consumer<usize> for Pieces {
    type Folder = PiecesFolder;
    type Reducer = Concat;
    type Result = Vec<Vec<usize>>;

    fn split_at(self, _index: usize) -> (Self, Self, Concat) {
        (Pieces, Pieces, Concat)
    }
    fn into_folder(self) -> PiecesFolder {
        PiecesFolder(Vec::new())
    }
    fn full(&self) -> bool {
        false
    }
}

impl UnindexedConsumer<usize> for Pieces {
    fn split_off_left(&self) -> Self {
        Pieces
    }
    fn to_reducer(&self) -> Concat {
        Concat
    }
}

impl Folder<usize> for PiecesFolder {
    type Result = Vec<Vec<usize>>;

    fn consume(mut self, item: usize) -> Self {
        self.0.push(item);
        self
    }
    fn complete(self) -> Vec<Vec<usize>> {
        vec![self.0]
    }
    fn full(&self) -> bool {
        false
    }
}

impl Reducer<Vec<Vec<usize>>> for Concat {
    fn reduce(self, mut left: Vec<Vec<usize>>, right: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        left.extend(right);
        left
    }
}

/// The pieces the Rayon-style consumer sees.
fn consumer_pieces(len: usize, min: usize) -> Vec<Vec<usize>> {
    (0..len)
        .into_par_iter()
        .with_min_len(min)
        .drive_unindexed(Pieces)
}

/// The pieces hold `0..len` in order, and each holds at least `min` items (or there is
/// one piece, shorter than `min`, when the whole input is).
fn check_pieces(pieces: &[Vec<usize>], len: usize, min: usize) -> Result<(), TestCaseError> {
    let joined: Vec<usize> = pieces.iter().flatten().copied().collect();
    prop_assert_eq!(joined, (0..len).collect::<Vec<_>>());
    if len < min {
        prop_assert_eq!(pieces.len(), 1);
    } else {
        let lens: Vec<usize> = pieces.iter().map(Vec::len).collect();
        prop_assert!(
            lens.iter().all(|&n| n >= min),
            "len {} min {}: piece lengths {:?}",
            len,
            min,
            lens
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fold_pieces_hold_at_least_min_items(len in 0usize..3000, min in 2usize..700) {
        let check = || check_pieces(&fold_pieces(len, min), len, min);
        on_each(std::slice::from_ref(forced_split_pool()), check)?;
        on_each(stress_pools(), check)?;
    }

    #[test]
    fn a_rayon_style_consumer_gets_pieces_of_at_least_min_items(
        len in 0usize..3000,
        min in 2usize..700,
    ) {
        let check = || check_pieces(&consumer_pieces(len, min), len, min);
        on_each(std::slice::from_ref(forced_split_pool()), check)?;
        on_each(stress_pools(), check)?;
    }
}

/// Items expensive enough that the loop splits eagerly after its first block: the first
/// piece must still hold `min` items (before, 1,000 items with `with_min_len(400)` made
/// pieces of 1, 499 and 500).
#[test]
fn expensive_items_split_early_only_after_min_items() {
    let pool = common::pool_with_heartbeat(4, std::time::Duration::from_micros(100));
    let slow = |x: usize| {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(20) {
            std::hint::spin_loop();
        }
        x
    };
    let run = |len: usize| -> Vec<Vec<usize>> {
        pool.install(|| {
            (0..len)
                .into_par_iter()
                .with_min_len(400)
                .map(slow)
                .fold(Vec::new, |mut piece, x| {
                    piece.push(x);
                    piece
                })
                .collect()
        })
    };
    // 1,000 items cannot split once 400 of them made a piece: the rest (600) has no two
    // halves of 400.
    let pieces = run(1000);
    check_pieces(&pieces, 1000, 400).unwrap();
    assert_eq!(pieces.len(), 1);
    // 2,000 items (40 ms of work) split after the first 400.
    let split_seen = AtomicBool::new(false);
    for _ in 0..3 {
        let pieces = run(2000);
        check_pieces(&pieces, 2000, 400).unwrap();
        if pieces.len() > 1 {
            split_seen.store(true, Ordering::Relaxed);
        }
    }
    assert!(split_seen.load(Ordering::Relaxed), "the loop never split");
}
