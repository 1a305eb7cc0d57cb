//! Finds libguardjit with `pkg-config --libs guardjit` and links the shared
//! library (`libguardjit.so`, which exports only `gj_*` and carries LLVM,
//! protobuf and absl inside, so nothing else needs linking).
//!
//! `GUARDJIT_LIB_DIR` skips pkg-config and links `libguardjit.so` from that
//! directory instead. The pkg-config binary is `$PKG_CONFIG` if set, else
//! `pkg-config`; it honours `PKG_CONFIG_PATH` as usual.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "GUARDJIT_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    if let Ok(dir) = env::var("GUARDJIT_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=guardjit");
        // Dependents' build scripts see DEP_GUARDJIT_LIB_DIR.
        println!("cargo:lib_dir={dir}");
        return;
    }

    let libs = pkg_config(&["--libs", "guardjit"]);
    let mut linked = false;
    let mut lib_dir = None;
    for flag in libs.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
            lib_dir.get_or_insert_with(|| dir.to_string());
        } else if let Some(lib) = flag.strip_prefix("-l") {
            // The .pc file's Libs name only guardjit (the private ones are
            // for a static link); link whatever it names, as a shared library.
            println!("cargo:rustc-link-lib=dylib={lib}");
            linked |= lib == "guardjit";
        }
    }
    if !linked {
        panic!("`pkg-config --libs guardjit` printed {libs:?}, which does not name -lguardjit");
    }
    if let Some(dir) = lib_dir {
        println!("cargo:lib_dir={dir}");
    }
    let cflags = pkg_config(&["--cflags", "guardjit"]);
    println!("cargo:cflags={}", cflags.trim());
}

/// Runs pkg-config and returns its stdout, or stops the build with a message
/// that says what to set.
fn pkg_config(args: &[&str]) -> String {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(&program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "guardjit-sys: could not run `{program}` ({e}); install pkg-config or set \
             GUARDJIT_LIB_DIR to the directory holding libguardjit.so"
            )
        });
    if !output.status.success() {
        panic!(
            "guardjit-sys: `{program} {}` failed ({}): {}\nSet PKG_CONFIG_PATH to the \
             directory holding guardjit.pc (PREFIX/lib/pkgconfig after `cmake --install`), \
             or GUARDJIT_LIB_DIR to the directory holding libguardjit.so",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).expect("pkg-config printed non-UTF-8 output")
}
