//! `build_global`: configures the global pool once; a second call is an error.
#[test]
fn build_global_once_then_error() {
    sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .expect("first build_global");
    assert_eq!(sumac::current_num_threads(), 3);
    let error = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .unwrap_err();
    assert_eq!(
        error.kind(),
        sumac::ThreadPoolBuildErrorKind::GlobalPoolAlreadyInitialized
    );
    // Rayon's message, word for word (code matching on it keeps working).
    assert_eq!(
        error.to_string(),
        "The global thread pool has already been initialized."
    );
    assert_eq!(sumac::current_num_threads(), 3);
    assert_eq!(sumac::join(|| 1, || 2), (1, 2));
    assert_eq!(sumac::global_stats().workers.len(), 3);
}
