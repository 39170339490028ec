//! The analyzer's JSON report straight to Python objects, as `json.loads` would build them.
//!
//! `torchlower.analyze` returns the report as a dict. Building it here from the JSON bytes,
//! with one Python string per distinct key, takes about two thirds of the time of creating a
//! Python `str` of the whole text and running `json.loads` on it (a 2,000-line module's report
//! is ~700 KB, ~1,400 dicts). The text comes from the sandboxed analyzer, so it is parsed as
//! untrusted input: serde_json refuses malformed text and nesting deeper than 128 levels, and
//! nothing here panics.
//!
//! Values map as in `json.loads`: objects to dicts (key order kept), arrays to lists, strings
//! to str, `true`/`false`/`null` to `True`/`False`/`None`, integers to int and numbers with a
//! fraction or exponent to float. One difference: an integer beyond 64 bits becomes a float
//! (serde_json's reading); the analyzer's reports hold only offsets, lines and columns.

use std::collections::HashMap;
use std::fmt;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::IntoPyObjectExt;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The Python value of the JSON `text`.
pub fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let _paused = GcPaused::new(py);
    let mut keys = HashMap::new();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Value { py, keys: &mut keys }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|err| PyValueError::new_err(format!("the analyzer's report is not valid JSON: {err}")))?;
    Ok(value)
}

/// Python's cyclic garbage collector, paused while a report is built: its thousands of new
/// containers would trigger collections that cannot find anything (a report has no cycles).
/// Switched back on, if it was on, however the build ends.
struct GcPaused(bool);

impl GcPaused {
    fn new(_py: Python<'_>) -> Self {
        // SAFETY: the GIL is held (the `Python` token), as the C API requires.
        GcPaused(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPaused {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: dropped within `loads`, still holding the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// Python strings of the keys seen so far: reports repeat a few dozen keys thousands of times.
type Keys<'py> = HashMap<String, Bound<'py, PyString>>;

fn python_error<E: de::Error>(err: PyErr) -> E {
    E::custom(format!("building the Python value failed: {err}"))
}

struct Value<'a, 'py> {
    py: Python<'py>,
    keys: &'a mut Keys<'py>,
}

impl<'de, 'py> DeserializeSeed<'de> for Value<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 'py> Visitor<'de> for Value<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        v.into_bound_py_any(self.py).map_err(python_error)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        v.into_bound_py_any(self.py).map_err(python_error)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        v.into_bound_py_any(self.py).map_err(python_error)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        v.into_bound_py_any(self.py).map_err(python_error)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.py, v).into_any())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.py.None().into_bound(self.py))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Value { py, keys } = self;
        let list = PyList::empty(py);
        while let Some(item) = seq.next_element_seed(Value { py, keys: &mut *keys })? {
            list.append(item).map_err(python_error)?;
        }
        Ok(list.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Value { py, keys } = self;
        let dict = PyDict::new(py);
        while let Some(key) = map.next_key_seed(Key { py, keys: &mut *keys })? {
            let value = map.next_value_seed(Value { py, keys: &mut *keys })?;
            dict.set_item(key, value).map_err(python_error)?;
        }
        Ok(dict.into_any())
    }
}

/// An object key, as one shared Python string per distinct key.
struct Key<'a, 'py> {
    py: Python<'py>,
    keys: &'a mut Keys<'py>,
}

impl<'de, 'py> DeserializeSeed<'de> for Key<'_, 'py> {
    type Value = Bound<'py, PyString>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'py> Visitor<'de> for Key<'_, 'py> {
    type Value = Bound<'py, PyString>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        if let Some(key) = self.keys.get(v) {
            return Ok(key.clone());
        }
        let key = PyString::new(self.py, v);
        self.keys.insert(v.to_string(), key.clone());
        Ok(key)
    }
}
