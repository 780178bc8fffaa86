//! `SUMAC_NUM_THREADS` sets the size of pools built with the default thread count (its
//! own test binary: it changes the process environment).

use sumac::ThreadPoolBuilder;

#[test]
fn sumac_num_threads_sets_the_default_and_bad_values_are_ignored() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::env::set_var("SUMAC_NUM_THREADS", "3");
    let pool = ThreadPoolBuilder::new().build().unwrap();
    assert_eq!(pool.current_num_threads(), 3);
    // An explicit count wins over the variable.
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    for bad in ["0", "many", "-4", ""] {
        std::env::set_var("SUMAC_NUM_THREADS", bad);
        let pool = ThreadPoolBuilder::new().build().unwrap();
        assert_eq!(
            pool.current_num_threads(),
            cores,
            "SUMAC_NUM_THREADS={bad:?}"
        );
    }
    std::env::remove_var("SUMAC_NUM_THREADS");
}
