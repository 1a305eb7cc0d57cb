//! Shared by the integration tests: the repository's example graphs and
//! reading their constants.
#![allow(dead_code)]

use std::path::PathBuf;

/// /work/main/examples: bindings/rust/guardjit/../../../examples.
pub fn example(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../examples")
        .join(name);
    assert!(p.exists(), "{} is missing", p.display());
    p
}

pub fn example_text(name: &str) -> String {
    std::fs::read_to_string(example(name)).unwrap()
}

/// The float32 values of constant `name` in a .pbtxt graph (its
/// C-escaped `data: "..."` string).
pub fn constant_f32(pbtxt: &str, name: &str) -> Vec<f32> {
    let block = &pbtxt[pbtxt.find(&format!("name: \"{name}\"\n")).unwrap()..];
    let start = block.find("data: \"").unwrap() + "data: \"".len();
    let bytes = unescape(&block[start..]);
    assert_eq!(bytes.len() % 4, 0);
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Protobuf text-format string unescaping, up to the closing quote.
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        match b[i] {
            b'"' => return out,
            b'\\' => {
                i += 1;
                match b[i] {
                    b'0'..=b'7' => {
                        let mut v = 0u32;
                        let mut n = 0;
                        while n < 3 && (b'0'..=b'7').contains(&b[i]) {
                            v = v * 8 + u32::from(b[i] - b'0');
                            i += 1;
                            n += 1;
                        }
                        out.push(v as u8);
                        continue;
                    }
                    b'x' => {
                        let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                        out.push(u8::from_str_radix(hex, 16).unwrap());
                        i += 2;
                    }
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    c => out.push(c), // \\ \" \'
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
}

/// Deterministic test data: `n` values in [-2, 2).
pub fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 4000) as f32 / 1000.0 - 2.0
        })
        .collect()
}

pub fn assert_close(got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(g) - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: got {g}, want {w}"
        );
    }
}

/// examples/mlp.pbtxt in f64 from the graph's own constants:
/// relu(x W1^T + b1) W2^T + b2 for `batch` rows of 8.
pub fn mlp_reference(pbtxt: &str, x: &[f32], batch: usize) -> Vec<f64> {
    let (w1, b1) = (
        constant_f32(pbtxt, "fc1_weight"),
        constant_f32(pbtxt, "fc1_bias"),
    );
    let (w2, b2) = (
        constant_f32(pbtxt, "fc2_weight"),
        constant_f32(pbtxt, "fc2_bias"),
    );
    assert_eq!(
        (w1.len(), b1.len(), w2.len(), b2.len()),
        (16 * 8, 16, 4 * 16, 4)
    );
    let mut out = Vec::with_capacity(batch * 4);
    for r in 0..batch {
        let h: Vec<f64> = (0..16)
            .map(|j| {
                let s: f64 = (0..8)
                    .map(|k| f64::from(x[r * 8 + k]) * f64::from(w1[j * 8 + k]))
                    .sum();
                (s + f64::from(b1[j])).max(0.0)
            })
            .collect();
        for j in 0..4 {
            out.push(
                (0..16)
                    .map(|k| h[k] * f64::from(w2[j * 16 + k]))
                    .sum::<f64>()
                    + f64::from(b2[j]),
            );
        }
    }
    out
}
