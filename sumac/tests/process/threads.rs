//! Dropping a pool joins its threads: none is left behind in the process.
use crate::common;
use crate::ONE_AT_A_TIME;

use std::time::Duration;

use common::{fib, fib_seq, process_thread_count, stress_pool};

#[test]
fn dropping_pools_joins_their_threads() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Warm up the global pool (and any lazily started threads) first.
    sumac::join(|| (), || ());
    let before = process_thread_count();
    for threads in [1, 2, 4] {
        let pool = stress_pool(threads);
        assert_eq!(pool.install(|| fib(15)), fib_seq(15));
        drop(pool);
    }
    // Other tests of this binary may be running: wait until the count settles back.
    let mut after = process_thread_count();
    for _ in 0..200 {
        if after <= before {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        after = process_thread_count();
    }
    assert!(
        after <= before,
        "threads leaked: {before} before, {after} after"
    );
}
