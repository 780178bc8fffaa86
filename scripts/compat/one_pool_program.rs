//! One pool for a whole program: image (default features) and ndarray (rayon) on the
//! rayon/rayon-core stand-ins. Exercises the Rayon paths of each crate, then checks that
//! the process has exactly one set of worker threads, sumac's global pool.

use std::io::Cursor;

use image::codecs::avif::AvifEncoder;
use image::{DynamicImage, ImageFormat, Rgb, Rgb32FImage, RgbImage};
use ndarray::{par_azip, Array2, Zip};
use rayon::prelude::*;

fn main() {
    // ndarray: parallel Zip and par_azip! (rayon's global pool).
    let mut a = Array2::<f64>::zeros((300, 300));
    let b = Array2::<f64>::from_elem((300, 300), 2.0);
    Zip::from(&mut a).and(&b).par_for_each(|a, &b| *a = b * b);
    par_azip!((a in &mut a, &b in &b) *a += b);
    assert_eq!(a.sum(), 6.0 * 300.0 * 300.0);

    // image: parallel pixel iterators (rayon's global pool).
    let mut rgb = RgbImage::new(64, 64);
    rgb.par_enumerate_pixels_mut()
        .for_each(|(x, y, pixel)| *pixel = Rgb([x as u8, y as u8, 7]));
    assert_eq!(rgb.par_pixels().filter(|pixel| pixel[2] == 7).count(), 64 * 64);

    // exr (through image): compresses and decompresses blocks on a pool it builds with
    // rayon_core::ThreadPoolBuilder.
    let hdr = Rgb32FImage::from_fn(64, 64, |x, y| Rgb([x as f32, y as f32, 0.5]));
    let mut exr = Cursor::new(Vec::new());
    DynamicImage::ImageRgb32F(hdr.clone())
        .write_to(&mut exr, ImageFormat::OpenExr)
        .unwrap();
    let decoded = image::load_from_memory_with_format(exr.get_ref(), ImageFormat::OpenExr)
        .unwrap()
        .into_rgb32f();
    assert_eq!(decoded, hdr);

    // ravif/rav1e (through image's AVIF encoder): encode on rayon's global pool.
    let mut avif = Vec::new();
    let small = image::imageops::thumbnail(&rgb, 16, 16);
    small
        .write_with_encoder(AvifEncoder::new_with_speed_quality(&mut avif, 10, 80))
        .unwrap();
    assert!(!avif.is_empty());

    // One pool, whichever crate name asks.
    let threads = rayon::current_num_threads();
    assert_eq!(rayon_core::current_num_threads(), threads);
    let workers: Vec<_> = rayon::broadcast(|_| std::thread::current().id());
    assert_eq!(workers.len(), threads);
    let names = thread_names();
    let sumac_workers = names
        .iter()
        .filter(|name| name.starts_with("sumac-worker-"))
        .count();
    // Besides the workers: this thread and, with more than one worker, the heartbeat.
    let expected_total = threads + 1 + usize::from(threads > 1);
    println!("threads of the process: {names:?}");
    assert_eq!(sumac_workers, threads, "{names:?}");
    assert_eq!(names.len(), expected_total, "{names:?}");
    println!("one pool: {threads} sumac workers, no other worker threads");
}

/// The names of the process's threads (`/proc/self/task/*/comm`, Linux).
fn thread_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|task| {
            let comm = task.unwrap().path().join("comm");
            std::fs::read_to_string(comm).unwrap().trim_end().to_owned()
        })
        .collect();
    names.sort();
    names
}
