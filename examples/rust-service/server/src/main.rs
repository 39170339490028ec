//! An HTTP endpoint serving `classify` of ../model.py through the crate `torchlower export`
//! wrote (../model-rs): no Python at run time.
//!
//!     classify-service WEIGHTS.safetensors [ADDR]      # ADDR: 127.0.0.1:8080; port 0 picks one
//!
//! It prints `listening on ADDR` once bound. `POST /classify` with `{"x": [[f32; 16], ...]}`
//! answers `{"probabilities": [[f32; 3], ...]}`; a body that is not such a matrix, or that the
//! model refuses (a row of another width), answers 400 with `{"error": "..."}` (the model's
//! errors are values, never panics). `GET /health` answers `ok`. HTTP/1.1 with keep-alive, one
//! thread per connection; the weights are loaded once, and each connection's thread holds its
//! own handles to them (`shallow_clone`: the same storage; a tch `Tensor` is `Send`, not `Sync`).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use model::tch::Tensor;

/// The weights `classify` takes after its input, by the names of its parameters.
const WEIGHTS: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

#[derive(serde::Deserialize)]
struct Request {
    x: Vec<Vec<f32>>,
}

#[derive(serde::Serialize)]
struct Answer {
    probabilities: Vec<Vec<f32>>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), addr) = (args.next(), args.next().unwrap_or_else(|| "127.0.0.1:8080".to_string())) else {
        eprintln!("usage: classify-service WEIGHTS.safetensors [ADDR]");
        std::process::exit(2);
    };
    let weights = match load_weights(&path) {
        Ok(weights) => weights,
        Err(error) => {
            eprintln!("classify-service: {path}: {error}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(&addr).unwrap_or_else(|error| {
        eprintln!("classify-service: cannot listen on {addr}: {error}");
        std::process::exit(2);
    });
    println!("listening on {}", listener.local_addr().map_or(addr, |a| a.to_string()));
    for stream in listener.incoming().flatten() {
        let weights: Vec<Tensor> = weights.iter().map(Tensor::shallow_clone).collect();
        std::thread::spawn(move || {
            let _ = serve(stream, &weights);
        });
    }
}

fn load_weights(path: &str) -> Result<Vec<Tensor>, String> {
    let mut named: HashMap<String, Tensor> = Tensor::read_safetensors(path).map_err(|e| e.to_string())?.into_iter().collect();
    WEIGHTS.iter().map(|name| named.remove(*name).ok_or_else(|| format!("no tensor named {name}"))).collect()
}

/// Answers the requests of one connection until the client closes it.
fn serve(stream: TcpStream, weights: &[Tensor]) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        let mut close = false;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "connection" => close = value.trim().eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        let mut body = vec![0; length.min(64 << 20)];
        reader.read_exact(&mut body)?;
        let (status, content) = match request_line.split_whitespace().take(2).collect::<Vec<_>>().as_slice() {
            ["POST", "/classify"] => classify(&body, weights),
            ["GET", "/health"] => ("200 OK", "ok".to_string()),
            _ => ("404 Not Found", r#"{"error": "POST /classify or GET /health"}"#.to_string()),
        };
        write!(writer, "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{content}", content.len())?;
        writer.flush()?;
        if close {
            return Ok(());
        }
    }
}

/// The model on one request's rows: (status, JSON body).
fn classify(body: &[u8], weights: &[Tensor]) -> (&'static str, String) {
    let error = |message: String| ("400 Bad Request", serde_json::json!({ "error": message }).to_string());
    let request: Request = match serde_json::from_slice(body) {
        Ok(request) => request,
        Err(e) => return error(format!("the body is not {{\"x\": [[numbers]]}}: {e}")),
    };
    let width = request.x.first().map_or(0, Vec::len);
    if request.x.is_empty() || request.x.iter().any(|row| row.len() != width) {
        return error("x must be a non-empty matrix (rows of one length)".to_string());
    }
    let flat: Vec<f32> = request.x.concat();
    let x = Tensor::from_slice(&flat).reshape([request.x.len() as i64, width as i64]);
    let [w1, b1, w2, b2, w3, b3] = weights else { return error("the service holds no weights".to_string()) };
    match model::classify(&x, w1, b1, w2, b2, w3, b3) {
        Ok(probabilities) => {
            let rows: Vec<Vec<f32>> = (0..probabilities.size()[0])
                .map(|i| Vec::<f32>::try_from(probabilities.get(i)).unwrap_or_default())
                .collect();
            ("200 OK", serde_json::to_string(&Answer { probabilities: rows }).unwrap_or_default())
        }
        Err(e) => error(e.to_string()),
    }
}
