//! Case dump for the eager comparison: the host models tell us the kernels do what *we*
//! think they should; to learn whether that is what *PyTorch* does, each case is written
//! out (inputs, op, arguments, device output) so that `scripts/gpu_eager_compare.py` can
//! rebuild the inputs on CUDA, run the eager op there and compare. This binary cannot link
//! torch, so the two halves meet only through files.
//!
//! Layout of the directory: `c{N}_in{i}.bin` (raw little-endian f32, an input's *whole*
//! storage, so strided and offset views are rebuilt exactly with `torch.as_strided`),
//! `c{N}_out.bin` (raw little-endian f32 or i64, contiguous) and `manifest.json`:
//! `{"cases": [{"case", "op", "args", "exact", "inputs": [{"file", "shape", "strides",
//! "offset"}], "output": {"file", "shape", "dtype": "float32" | "int64"}}]}`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Collects cases; the manifest is written once, by [`Dump::finish`], so a crashed run leaves
/// no manifest pointing at missing files.
pub struct Dump {
    dir: PathBuf,
    cases: Vec<Value>,
    next: usize,
}

/// One input as the kernel saw it: the whole storage plus the view on it (strides and
/// offset in elements, as `torch.as_strided` takes them).
pub struct Input<'a> {
    pub storage: &'a [f32],
    pub shape: &'a [i64],
    pub strides: &'a [i64],
    pub offset: i64,
}

/// The device's output, contiguous in `shape` order.
pub enum Output<'a> {
    F32 { values: &'a [f32], shape: &'a [i64] },
    I64 { values: &'a [i64], shape: &'a [i64] },
}

/// Writes `bytes` to `dir/name`; raw little-endian so numpy/torch read it with no header.
fn write_raw(dir: &Path, name: &str, bytes: impl Iterator<Item = u8>) -> io::Result<()> {
    let mut out = io::BufWriter::new(fs::File::create(dir.join(name))?);
    out.write_all(&bytes.collect::<Vec<u8>>())?;
    out.flush()
}

impl Dump {
    /// Creates `dir` (and its parents) if needed.
    pub fn new(dir: &Path) -> io::Result<Dump> {
        fs::create_dir_all(dir)?;
        Ok(Dump { dir: dir.to_path_buf(), cases: Vec::new(), next: 0 })
    }

    /// Writes one case's files now and keeps its manifest entry. `exact` asks the comparer
    /// for bitwise equality (ops whose eager CUDA result is determined, e.g. relu, add);
    /// otherwise it applies per-op tolerances.
    pub fn record(
        &mut self,
        case: &str,
        op: &str,
        args: Value,
        inputs: &[Input<'_>],
        output: Output<'_>,
        exact: bool,
    ) -> io::Result<()> {
        let n = self.next;
        self.next += 1;
        let mut ins = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            let file = format!("c{n}_in{i}.bin");
            write_raw(&self.dir, &file, input.storage.iter().flat_map(|v| v.to_le_bytes()))?;
            ins.push(json!({
                "file": file, "shape": input.shape, "strides": input.strides, "offset": input.offset,
            }));
        }
        let file = format!("c{n}_out.bin");
        let (shape, dtype) = match output {
            Output::F32 { values, shape } => {
                write_raw(&self.dir, &file, values.iter().flat_map(|v| v.to_le_bytes()))?;
                (shape, "float32")
            }
            Output::I64 { values, shape } => {
                write_raw(&self.dir, &file, values.iter().flat_map(|v| v.to_le_bytes()))?;
                (shape, "int64")
            }
        };
        self.cases.push(json!({
            "case": case, "op": op, "args": args, "exact": exact, "inputs": ins,
            "output": {"file": file, "shape": shape, "dtype": dtype},
        }));
        Ok(())
    }

    /// Writes `manifest.json` and returns its path.
    pub fn finish(self) -> io::Result<PathBuf> {
        let path = self.dir.join("manifest.json");
        let text = serde_json::to_string_pretty(&json!({ "cases": self.cases }))?;
        fs::write(&path, text)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_files_and_manifest() {
        let dir = std::env::temp_dir().join(format!("torchlower-dump-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut dump = Dump::new(&dir).unwrap();
        let storage = [0.0f32, 1.0, -2.5, 3.0, 4.0, 5.0];
        // A transposed 2x2 view starting at element 1.
        let x = Input { storage: &storage, shape: &[2, 2], strides: &[1, 2], offset: 1 };
        let out = [1.0f32, 0.0, 0.0, 4.0];
        dump.record("relu_t", "relu", json!({}), &[x], Output::F32 { values: &out, shape: &[2, 2] }, true).unwrap();
        let y = Input { storage: &storage, shape: &[2, 3], strides: &[3, 1], offset: 0 };
        let idx = [2i64, 2];
        let args = json!({"dim": 1, "keepdim": false});
        dump.record("argmax", "argmax", args, &[y], Output::I64 { values: &idx, shape: &[2] }, true).unwrap();
        let manifest = dump.finish().unwrap();

        let m: Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
        let cases = m["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0]["op"], "relu");
        assert_eq!(cases[0]["exact"], true);
        assert_eq!(cases[0]["inputs"][0]["file"], "c0_in0.bin");
        assert_eq!(cases[0]["inputs"][0]["strides"], json!([1, 2]));
        assert_eq!(cases[0]["inputs"][0]["offset"], 1);
        assert_eq!(cases[0]["output"]["dtype"], "float32");
        assert_eq!(cases[1]["args"]["dim"], 1);
        assert_eq!(cases[1]["output"], json!({"file": "c1_out.bin", "shape": [2], "dtype": "int64"}));

        let raw = fs::read(dir.join("c0_in0.bin")).unwrap();
        assert_eq!(raw.len(), 24);
        assert_eq!(f32::from_le_bytes(raw[8..12].try_into().unwrap()), -2.5);
        let raw = fs::read(dir.join("c1_out.bin")).unwrap();
        assert_eq!(raw.len(), 16);
        assert_eq!(i64::from_le_bytes(raw[8..16].try_into().unwrap()), 2);
        fs::remove_dir_all(&dir).unwrap();
    }
}
