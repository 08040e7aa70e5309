// Builds heapprof's C core (../../preload) into a static library with the system's C
// compiler (CC, or cc) and ar (AR, or ar): no crates from outside, so it builds offline.
// With HEAPPROF_LIB_DIR set, links the libheapprof_rust.a that `make` built there instead;
// HEAPPROF_SRC names heapprof's source tree when the crate is built away from it.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

// Not in the Rust build: the other ways to the real allocator, and what only a
// preloaded library interposes (dlclose, C++ operators, thread names, module records).
const LEFT_OUT: &[&str] = &[
    "hp_tag.c", "new_delete.c", "threads.c", "modules.c", "dlclose.c", "real_dlsym.c",
    "real_wrap.c", "gcc_unwind.c",
];

fn run(cmd: &mut Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {:?}: {}", cmd, e));
    if !status.success() {
        panic!("{:?} failed: {}", cmd, status);
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=HEAPPROF_LIB_DIR");
    if let Ok(dir) = env::var("HEAPPROF_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-lib=static=heapprof_rust");
        println!("cargo:rustc-link-lib=m");
        return;
    }
    println!("cargo:rerun-if-env-changed=HEAPPROF_SRC");
    let root = match env::var("HEAPPROF_SRC") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../.."),
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let ar = env::var("AR").unwrap_or_else(|_| "ar".into());
    let preload = root.join("preload");
    println!("cargo:rerun-if-changed={}", preload.display());
    println!("cargo:rerun-if-changed={}", root.join("include").display());

    let mut srcs: Vec<PathBuf> = std::fs::read_dir(&preload)
        .expect("heapprof's preload/ sources next to the crate")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().map_or(false, |x| x == "c"))
        .filter(|p| !LEFT_OUT.contains(&p.file_name().unwrap().to_str().unwrap()))
        .collect();
    srcs.sort();
    let mut objs = Vec::new();
    for src in &srcs {
        let obj = out.join(Path::new(src.file_name().unwrap()).with_extension("o"));
        run(Command::new(&cc)
            .args(["-O2", "-g", "-fPIC", "-fvisibility=hidden", "-fno-omit-frame-pointer"])
            .args(["-funwind-tables", "-pthread", "-DHP_ENTRIES_RUST"])
            .arg("-DHP_VERSION=\"0.1.0\"")
            .arg(format!("-I{}", root.join("include").display()))
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj));
        objs.push(obj);
    }
    let lib = out.join("libheapprof_rust.a");
    let _ = std::fs::remove_file(&lib);
    run(Command::new(&ar).arg("crs").arg(&lib).args(&objs));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=heapprof_rust");
    println!("cargo:rustc-link-lib=m");
}
