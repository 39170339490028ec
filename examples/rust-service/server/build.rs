//! The server binary finds libtorch at run time: an rpath to the folder tch linked against,
//! which torchlower-backend publishes to the crates that depend on it directly.

fn main() {
    if let Ok(folder) = std::env::var("DEP_TORCHLOWER_BACKEND_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{folder}");
    }
}
