//! Grammar-shaped Python: annotated functions over the op table's spellings, statements the
//! analyzer lowers (and some it refuses), helper calls between them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(source) = torchlower_analyzer_fuzz::python(&mut u) {
        torchlower_analyzer_fuzz::check(&source);
    }
});
