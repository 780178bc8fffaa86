//! Rayon's public API through the stand-ins: every public path of Rayon 1.12.0 and
//! rayon-core 1.13.0 resolves (the list below is `scripts/rayon-public-paths.py` run on
//! their rustdoc JSON), and the types that name generic parameters take Rayon's.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

/// Compiles only if each path names an item (`as _` keeps same-named items apart).
#[allow(unused_imports, deprecated)]
mod every_public_path {
    use rayon::array as _;
    use rayon::array::IntoIter as _;
    use rayon::broadcast as _;
    use rayon::collections as _;
    use rayon::collections::binary_heap as _;
    use rayon::collections::binary_heap::Drain as _;
    use rayon::collections::binary_heap::IntoIter as _;
    use rayon::collections::binary_heap::Iter as _;
    use rayon::collections::btree_map as _;
    use rayon::collections::btree_map::IntoIter as _;
    use rayon::collections::btree_map::Iter as _;
    use rayon::collections::btree_map::IterMut as _;
    use rayon::collections::btree_set as _;
    use rayon::collections::btree_set::IntoIter as _;
    use rayon::collections::btree_set::Iter as _;
    use rayon::collections::hash_map as _;
    use rayon::collections::hash_map::Drain as _;
    use rayon::collections::hash_map::IntoIter as _;
    use rayon::collections::hash_map::Iter as _;
    use rayon::collections::hash_map::IterMut as _;
    use rayon::collections::hash_set as _;
    use rayon::collections::hash_set::Drain as _;
    use rayon::collections::hash_set::IntoIter as _;
    use rayon::collections::hash_set::Iter as _;
    use rayon::collections::linked_list as _;
    use rayon::collections::linked_list::IntoIter as _;
    use rayon::collections::linked_list::Iter as _;
    use rayon::collections::linked_list::IterMut as _;
    use rayon::collections::vec_deque as _;
    use rayon::collections::vec_deque::Drain as _;
    use rayon::collections::vec_deque::IntoIter as _;
    use rayon::collections::vec_deque::Iter as _;
    use rayon::collections::vec_deque::IterMut as _;
    use rayon::current_num_threads as _;
    use rayon::current_thread_index as _;
    use rayon::in_place_scope as _;
    use rayon::in_place_scope_fifo as _;
    use rayon::iter as _;
    use rayon::iter::empty as _;
    use rayon::iter::once as _;
    use rayon::iter::plumbing as _;
    use rayon::iter::plumbing::bridge as _;
    use rayon::iter::plumbing::bridge_producer_consumer as _;
    use rayon::iter::plumbing::bridge_unindexed as _;
    use rayon::iter::plumbing::Consumer as _;
    use rayon::iter::plumbing::Folder as _;
    use rayon::iter::plumbing::Producer as _;
    use rayon::iter::plumbing::ProducerCallback as _;
    use rayon::iter::plumbing::Reducer as _;
    use rayon::iter::plumbing::UnindexedConsumer as _;
    use rayon::iter::plumbing::UnindexedProducer as _;
    use rayon::iter::repeat as _;
    use rayon::iter::repeat_n as _;
    use rayon::iter::repeatn as _;
    use rayon::iter::split as _;
    use rayon::iter::walk_tree as _;
    use rayon::iter::walk_tree_postfix as _;
    use rayon::iter::walk_tree_prefix as _;
    use rayon::iter::Chain as _;
    use rayon::iter::Chunks as _;
    use rayon::iter::Cloned as _;
    use rayon::iter::Copied as _;
    use rayon::iter::Either as _;
    use rayon::iter::Empty as _;
    use rayon::iter::Enumerate as _;
    use rayon::iter::ExponentialBlocks as _;
    use rayon::iter::Filter as _;
    use rayon::iter::FilterMap as _;
    use rayon::iter::FlatMap as _;
    use rayon::iter::FlatMapIter as _;
    use rayon::iter::Flatten as _;
    use rayon::iter::FlattenIter as _;
    use rayon::iter::Fold as _;
    use rayon::iter::FoldChunks as _;
    use rayon::iter::FoldChunksWith as _;
    use rayon::iter::FoldWith as _;
    use rayon::iter::FromParallelIterator as _;
    use rayon::iter::IndexedParallelIterator as _;
    use rayon::iter::Inspect as _;
    use rayon::iter::Interleave as _;
    use rayon::iter::InterleaveShortest as _;
    use rayon::iter::Intersperse as _;
    use rayon::iter::IntoParallelIterator as _;
    use rayon::iter::IntoParallelRefIterator as _;
    use rayon::iter::IntoParallelRefMutIterator as _;
    use rayon::iter::IterBridge as _;
    use rayon::iter::Map as _;
    use rayon::iter::MapInit as _;
    use rayon::iter::MapWith as _;
    use rayon::iter::MaxLen as _;
    use rayon::iter::MinLen as _;
    use rayon::iter::MultiZip as _;
    use rayon::iter::Once as _;
    use rayon::iter::PanicFuse as _;
    use rayon::iter::ParallelBridge as _;
    use rayon::iter::ParallelDrainFull as _;
    use rayon::iter::ParallelDrainRange as _;
    use rayon::iter::ParallelExtend as _;
    use rayon::iter::ParallelIterator as _;
    use rayon::iter::Positions as _;
    use rayon::iter::Repeat as _;
    use rayon::iter::RepeatN as _;
    use rayon::iter::Rev as _;
    use rayon::iter::Skip as _;
    use rayon::iter::SkipAny as _;
    use rayon::iter::SkipAnyWhile as _;
    use rayon::iter::Split as _;
    use rayon::iter::StepBy as _;
    use rayon::iter::Take as _;
    use rayon::iter::TakeAny as _;
    use rayon::iter::TakeAnyWhile as _;
    use rayon::iter::TryFold as _;
    use rayon::iter::TryFoldWith as _;
    use rayon::iter::UniformBlocks as _;
    use rayon::iter::Update as _;
    use rayon::iter::WalkTree as _;
    use rayon::iter::WalkTreePostfix as _;
    use rayon::iter::WalkTreePrefix as _;
    use rayon::iter::WhileSome as _;
    use rayon::iter::Zip as _;
    use rayon::iter::ZipEq as _;
    use rayon::join as _;
    use rayon::join_context as _;
    use rayon::max_num_threads as _;
    use rayon::option as _;
    use rayon::option::IntoIter as _;
    use rayon::option::Iter as _;
    use rayon::option::IterMut as _;
    use rayon::prelude as _;
    use rayon::prelude::FromParallelIterator as _;
    use rayon::prelude::IndexedParallelIterator as _;
    use rayon::prelude::IntoParallelIterator as _;
    use rayon::prelude::IntoParallelRefIterator as _;
    use rayon::prelude::IntoParallelRefMutIterator as _;
    use rayon::prelude::ParallelBridge as _;
    use rayon::prelude::ParallelDrainFull as _;
    use rayon::prelude::ParallelDrainRange as _;
    use rayon::prelude::ParallelExtend as _;
    use rayon::prelude::ParallelIterator as _;
    use rayon::prelude::ParallelSlice as _;
    use rayon::prelude::ParallelSliceMut as _;
    use rayon::prelude::ParallelString as _;
    use rayon::range as _;
    use rayon::range::Iter as _;
    use rayon::range_inclusive as _;
    use rayon::range_inclusive::Iter as _;
    use rayon::result as _;
    use rayon::result::IntoIter as _;
    use rayon::result::Iter as _;
    use rayon::result::IterMut as _;
    use rayon::scope as _;
    use rayon::scope_fifo as _;
    use rayon::slice as _;
    use rayon::slice::ArrayWindows as _;
    use rayon::slice::ChunkBy as _;
    use rayon::slice::ChunkByMut as _;
    use rayon::slice::Chunks as _;
    use rayon::slice::ChunksExact as _;
    use rayon::slice::ChunksExactMut as _;
    use rayon::slice::ChunksMut as _;
    use rayon::slice::Iter as _;
    use rayon::slice::IterMut as _;
    use rayon::slice::ParallelSlice as _;
    use rayon::slice::ParallelSliceMut as _;
    use rayon::slice::RChunks as _;
    use rayon::slice::RChunksExact as _;
    use rayon::slice::RChunksExactMut as _;
    use rayon::slice::RChunksMut as _;
    use rayon::slice::Split as _;
    use rayon::slice::SplitInclusive as _;
    use rayon::slice::SplitInclusiveMut as _;
    use rayon::slice::SplitMut as _;
    use rayon::slice::Windows as _;
    use rayon::spawn as _;
    use rayon::spawn_broadcast as _;
    use rayon::spawn_fifo as _;
    use rayon::str as _;
    use rayon::str::Bytes as _;
    use rayon::str::CharIndices as _;
    use rayon::str::Chars as _;
    use rayon::str::EncodeUtf16 as _;
    use rayon::str::Lines as _;
    use rayon::str::MatchIndices as _;
    use rayon::str::Matches as _;
    use rayon::str::ParallelString as _;
    use rayon::str::Split as _;
    use rayon::str::SplitAsciiWhitespace as _;
    use rayon::str::SplitInclusive as _;
    use rayon::str::SplitTerminator as _;
    use rayon::str::SplitWhitespace as _;
    use rayon::string as _;
    use rayon::string::Drain as _;
    use rayon::vec as _;
    use rayon::vec::Drain as _;
    use rayon::vec::IntoIter as _;
    use rayon::yield_local as _;
    use rayon::yield_now as _;
    use rayon::BroadcastContext as _;
    use rayon::FnContext as _;
    use rayon::Scope as _;
    use rayon::ScopeFifo as _;
    use rayon::ThreadBuilder as _;
    use rayon::ThreadPool as _;
    use rayon::ThreadPoolBuildError as _;
    use rayon::ThreadPoolBuilder as _;
    use rayon::Yield as _;
    use rayon_core::broadcast as _;
    use rayon_core::current_num_threads as _;
    use rayon_core::current_thread_has_pending_tasks as _;
    use rayon_core::current_thread_index as _;
    use rayon_core::in_place_scope as _;
    use rayon_core::in_place_scope_fifo as _;
    use rayon_core::initialize as _;
    use rayon_core::join as _;
    use rayon_core::join_context as _;
    use rayon_core::max_num_threads as _;
    use rayon_core::scope as _;
    use rayon_core::scope_fifo as _;
    use rayon_core::spawn as _;
    use rayon_core::spawn_broadcast as _;
    use rayon_core::spawn_fifo as _;
    use rayon_core::yield_local as _;
    use rayon_core::yield_now as _;
    use rayon_core::BroadcastContext as _;
    use rayon_core::Configuration as _;
    use rayon_core::FnContext as _;
    use rayon_core::Scope as _;
    use rayon_core::ScopeFifo as _;
    use rayon_core::ThreadBuilder as _;
    use rayon_core::ThreadPool as _;
    use rayon_core::ThreadPoolBuildError as _;
    use rayon_core::ThreadPoolBuilder as _;
    use rayon_core::Yield as _;
}

#[test]
fn rayon_types_take_rayons_generic_parameters() {
    fn by_value(values: [u32; 4]) -> rayon::array::IntoIter<u32, 4> {
        values.into_par_iter()
    }
    fn drain_map(map: &mut HashMap<u32, u32>) -> rayon::collections::hash_map::Drain<'_, u32, u32> {
        map.par_drain()
    }
    fn drain_set(set: &mut HashSet<u32>) -> rayon::collections::hash_set::Drain<'_, u32> {
        set.par_drain()
    }
    type CheckedSums<'a> = rayon::iter::TryFold<
        rayon::slice::Iter<'a, u32>,
        Option<u32>,
        fn() -> u32,
        fn(u32, &u32) -> Option<u32>,
    >;
    fn checked_sums(values: &[u32]) -> CheckedSums<'_> {
        values
            .par_iter()
            .try_fold(|| 0, |sum, &x| sum.checked_add(x))
    }

    assert_eq!(by_value([1, 2, 3, 4]).sum::<u32>(), 10);
    let mut map: HashMap<u32, u32> = (0..100).map(|x| (x, x)).collect();
    assert_eq!(drain_map(&mut map).count(), 100);
    assert!(map.is_empty());
    let mut set: HashSet<u32> = (0..100).collect();
    assert_eq!(drain_set(&mut set).count(), 100);
    assert!(set.is_empty());
    let sums: Option<u32> = checked_sums(&[1, 2, 3]).try_reduce(|| 0, u32::checked_add);
    assert_eq!(sums, Some(6));
}

#[test]
fn scopes_are_debug_as_in_rayon() {
    let shown = rayon::scope(|scope| format!("{scope:?}"));
    assert!(shown.starts_with("Scope"), "{shown}");
    let shown = rayon_core::scope_fifo(|scope| format!("{scope:?}"));
    assert!(shown.starts_with("ScopeFifo"), "{shown}");
}
