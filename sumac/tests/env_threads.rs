//! `SUMAC_NUM_THREADS` (and, with the `rayon-num-threads` feature, Rayon's variables) set
//! the size of pools built with the default thread count (its own test binary, one test:
//! it changes the process environment).

use sumac::ThreadPoolBuilder;

const VARIABLES: [&str; 3] = [
    "SUMAC_NUM_THREADS",
    "RAYON_NUM_THREADS",
    "RAYON_RS_NUM_CPUS",
];

/// The size of a pool built with the default thread count under exactly these variables.
fn default_size(variables: &[(&str, &str)]) -> usize {
    for name in VARIABLES {
        std::env::remove_var(name);
    }
    for (name, value) in variables {
        std::env::set_var(name, value);
    }
    ThreadPoolBuilder::new()
        .build()
        .unwrap()
        .current_num_threads()
}

#[test]
fn thread_count_variables_set_the_default_and_bad_values_are_ignored() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Counts other than the core count, so that each check can fail.
    let (three, four, five) = (cores + 1, cores + 2, cores + 3);
    let (three_text, four_text, five_text) =
        (three.to_string(), four.to_string(), five.to_string());
    let (three_text, four_text, five_text) = (&*three_text, &*four_text, &*five_text);

    assert_eq!(default_size(&[]), cores);
    assert_eq!(default_size(&[("SUMAC_NUM_THREADS", three_text)]), three);
    // An explicit count wins over the variable.
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    for bad in ["0", "many", "-4", ""] {
        assert_eq!(
            default_size(&[("SUMAC_NUM_THREADS", bad)]),
            cores,
            "SUMAC_NUM_THREADS={bad:?}"
        );
    }

    // Rayon's variables: read (as rayon-core reads them) only with the feature, and
    // `SUMAC_NUM_THREADS` wins over them.
    let if_rayon = |n: usize| {
        if cfg!(feature = "rayon-num-threads") {
            n
        } else {
            cores
        }
    };
    assert_eq!(
        default_size(&[("RAYON_NUM_THREADS", five_text)]),
        if_rayon(five)
    );
    assert_eq!(
        default_size(&[
            ("SUMAC_NUM_THREADS", three_text),
            ("RAYON_NUM_THREADS", five_text)
        ]),
        three
    );
    assert_eq!(
        default_size(&[
            ("SUMAC_NUM_THREADS", "none"),
            ("RAYON_NUM_THREADS", five_text)
        ]),
        if_rayon(five)
    );
    assert_eq!(
        default_size(&[("RAYON_RS_NUM_CPUS", four_text)]),
        if_rayon(four)
    );
    assert_eq!(
        default_size(&[
            ("RAYON_NUM_THREADS", five_text),
            ("RAYON_RS_NUM_CPUS", four_text)
        ]),
        if_rayon(five)
    );
    // As in Rayon, a malformed `RAYON_NUM_THREADS` falls through to `RAYON_RS_NUM_CPUS`,
    // but `0` stands for one thread per core.
    assert_eq!(
        default_size(&[
            ("RAYON_NUM_THREADS", "many"),
            ("RAYON_RS_NUM_CPUS", four_text)
        ]),
        if_rayon(four)
    );
    assert_eq!(
        default_size(&[("RAYON_NUM_THREADS", "0"), ("RAYON_RS_NUM_CPUS", four_text)]),
        cores
    );
    assert_eq!(default_size(&[("RAYON_RS_NUM_CPUS", "0")]), cores);
    for name in VARIABLES {
        std::env::remove_var(name);
    }
}
