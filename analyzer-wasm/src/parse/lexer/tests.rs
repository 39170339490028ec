//! The bytewise lexer against rustpython's: the repository's Python files, edge cases,
//! random token soup, and the parse of the corpus.

use super::*;
use rustpython_parser::Mode;

/// rustpython's own tokens (its lexer and soft-keyword pass), `None` on a lexical error.
fn reference(text: &str) -> Option<Vec<(Tok, TextRange)>> {
    rustpython_parser::lexer::lex(text, Mode::Module).collect::<Result<Vec<_>, _>>().ok()
}

/// Where the bytewise lexer does not give up, it agrees with rustpython token for token.
/// Returns whether it gave up.
fn agrees(text: &str) -> bool {
    match tokens(text) {
        Some(ours) => {
            let theirs = reference(text).unwrap_or_else(|| panic!("rustpython refuses what we lexed: {text:?}"));
            assert_eq!(ours, theirs, "tokens differ for {text:?}");
            false
        }
        None => true,
    }
}

fn python_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("node_modules") {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

#[test]
fn agrees_with_rustpython_on_every_python_file_of_the_repository() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests", "examples", "benchmarks", "scripts", "host-py/python"] {
        python_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "{} files", files.len());
    let mut lexed = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("UTF-8 source");
        if !agrees(&text) {
            lexed += 1;
        }
    }
    // the fast path must cover ordinary code, not only agree where it runs
    assert!(lexed * 10 >= files.len() * 8, "only {lexed} of {} files lexed bytewise", files.len());
}

#[test]
fn agrees_on_edge_cases() {
    let cases = [
        "", "\n", "x", "x\n", "  \n\n", "# only a comment", "x = 1  # c\n", "x = 1\r\ny = 2\r\n", "x = 1\ry = 2\r",
        "if a:\n    b\n", "if a:\n    b\nc\n", "if a:\n  if b:\n    c\nd", "if a:\n    b\n\n  # c\n    d\n",
        "def f(a,\n      b):\n    return (a +\n            b)\n", "x = [\n  1,\n\n  2,\n]\n", "x = (1 +\n# c\n 2)\n",
        "x = 1 + \\\n    2\n", "x = 1 + \\\r\n    2\n", "a\\\nb", "if x:\n    y = \\\n  3\n",
        "s = 'a' \"b\" '''c\nd''' \"\"\"e\"\"\"\n", "s = 'it\\'s' + \"q\\\"\" + '\\\\'\n", "s = '\\\n'\n",
        "s = r'\\d' + b'x' + f'{a}' + u'u' + rb'x' + Br'x' + fR'{a}' + F'x'\n", "s = '''a''''\n", "s = '''a'''' '\n",
        "s = 'é' + \"日本\" + '''ü\n'''  # café\n", "s = '\\é'\n", "x = ur'a'\n", "x = bu'a'\n", "rb = 1; rb2 = rb\n",
        "x = 0 + 1 + 42 + 123456789012345678\n", "x = 1.5 + 2. + 3.25e-3 + 4e5 + 5E+2 + 6.e3 + 0.0 + 1.5e\n",
        "x = 1.real\n", "x = 1 .real\n", "x = 1if y else 2\n", "x = 1e\n", "x = 0.5j\n", "x = 007\n", "x = 00\n",
        "x = 0x1f\n", "x = 1_000\n", "x = .5\n", "x = a...b\n", "x[...]\n", "x = a.b.c\n",
        "a += 1; a -= 1; a *= 1; a /= 1; a //= 1; a %= 1; a **= 1; a @= b; a &= 1; a |= 1; a ^= 1; a <<= 1; a >>= 1\n",
        "x = a == b != c <= d >= e < f > g << h >> i ** j // k -> l := m ~n\n", "def f() -> int: ...\n",
        "x = 1 ! 2\n", "x = a $ b\n", "x = `a`\n", "x = (\n", "x = )\n", "x = 'abc\n", "x = '''abc\n", "x = 1 \\ 2\n", "x = 1\\",
        "match = 1\nx = match\n", "match x:\n    case 1:\n        pass\n", "x = type(y)\ntype = 3\n", "type X = int\n",
        "print(match, case, type)\n", "if x:\n\tpass\n", "if x:\n    a\n\tb\n", "\u{feff}x = 1\n", "x = é\n", "é = 1\n", "x = a\u{3000}b\n",
        "x\x0c= 1\n", "\x0cx = 1\n", "if a:\n        b\n    c\n", "x = 1\n  y = 2\n", "class C:\n    def f(self):\n        return 1\n\n\nx = C()\n",
        "x = {'a': 1, **b}\ny = [*c]\nlambda: 0\n", "async def f():\n    await g()\n", "x = not a and b or c is not d in e\n",
        "@torchlower.native\ndef f(x: T) -> T:\n    return x\n", "x = True, False, None\n", "global x; nonlocal y\n",
    ];
    let mut lexed = 0;
    for case in cases {
        if !agrees(case) {
            lexed += 1;
        }
    }
    assert!(lexed > cases.len() / 2, "only {lexed} of {} edge cases lexed bytewise", cases.len());
    // what must give up
    for case in ["x = é\n", "if x:\n\tpass\n", "\u{feff}x = 1\n", "x = 0x1f\n", "x = 1 ! 2\n", "x = 'abc\n", "match x:\n    case 1:\n        pass\n", "x = 1\r\ny = '''a\r\nb'''\n"] {
        assert!(tokens(case).is_none(), "should give up: {case:?}");
    }
}

/// Random token soup over the characters that matter (quotes, backslashes, newlines,
/// indentation, digits, operators, brackets), deterministic: wherever the bytewise lexer
/// lexes, it agrees with rustpython. `TL_LEXER_SOUPS=N` tries N soups instead of 20,000.
#[test]
fn agrees_on_random_token_soup() {
    let pieces = [
        "x", "ab_1", "if", "else", "match", "type", "case", " ", "  ", "\t", "\n", "\r\n", "\r", "    ", "#c", "'", "\"", "'''", "\\",
        "r'", "b\"", "0", "1", "07", "2.5", "1e3", "1e", ".", "...", "(", ")", "[", "]", "{", "}", ":", "=", "==", "+=", "-", "->", "*",
        "**=", "/", "//", "<", "<<=", ">", "!", "!=", "@", ",", ";", "é", "\\\n",
    ];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let rounds: usize = std::env::var("TL_LEXER_SOUPS").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let mut lexed = 0;
    for _ in 0..rounds {
        let len = (next() % 12) as usize;
        let text: String = (0..len).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
        if !agrees(&text) {
            lexed += 1;
        }
    }
    eprintln!("soups lexed bytewise: {lexed} of {rounds}");
    assert!(lexed > rounds / 10, "only {lexed} soups lexed bytewise");
}

#[test]
fn the_parse_is_the_same_with_either_lexer() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    python_files(&root.join("tests/corpus"), &mut files);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("UTF-8 source");
        let name = path.display().to_string();
        let ours = super::super::parse_source(&text, &name);
        let theirs = rustpython_parser::parse(&text, Mode::Module, &name);
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{name}");
    }
}

#[test]
fn keywords_are_rustpythons() {
    use rustpython_parser::lexer::KEYWORDS;
    for (name, tok) in KEYWORDS.entries() {
        if *name == "..." {
            continue; // not a name: the lexer sees three dots
        }
        assert_eq!(keyword(name).as_ref(), Some(tok), "{name}");
    }
    assert_eq!(KEYWORDS.len() - 1, ["False", "None", "True"].len() + 35);
    for name in ["x", "torch", "iff", "Match", "TYPE", "nonlocals", "_", "self", "print", "exec"] {
        assert_eq!(keyword(name), None, "{name}");
        assert!(KEYWORDS.get(name).is_none(), "{name}");
    }
}
