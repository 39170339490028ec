//! Arbitrary bytes as a module's source, through the same entry the wasm ABI uses (invalid
//! UTF-8 replaced, TL003): the analyzer must end in a report that holds its invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let report = torchlower_analyzer_fuzz::analyze(data.to_vec());
    torchlower_analyzer_fuzz::check_report(&String::from_utf8_lossy(data), &report);
});
