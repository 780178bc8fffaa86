//! Empty: Cargo accepts `links = "rayon-core"` only from a package with a build script.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
