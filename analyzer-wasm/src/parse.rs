//! Parsing: a cheap pre-scan that refuses pathological nesting, then Ruff's parser
//! (`ruff_python_parser`: a hand-written lexer and recursive-descent parser, about ten times
//! faster than the LALRPOP parser of rustpython-parser we used before).
//! Positions are byte offsets everywhere inside the analyzer; [`LineIndex`] turns them into
//! the report's 1-based line/column (columns count Unicode scalar values).

use crate::report::{Diagnostic, Span};
use crate::rules;
use ruff_python_ast::{self as ast, ElifElseClause, Stmt, StmtFunctionDef, StmtIf};
use ruff_text_size::{Ranged, TextRange, TextSize};

/// CPython refuses more than 200 nested brackets ("too many nested parentheses").
pub const MAX_BRACKET_DEPTH: usize = 200;
/// CPython refuses more than 100 indentation levels.
pub const MAX_INDENT_DEPTH: usize = 100;
/// Longest run of prefix operators (`- - - x`, `not not x`) accepted before parsing; each
/// adds one AST level without a bracket.
pub const MAX_OPERATOR_RUN: usize = 200;
/// Most operator tokens (binary operators, attribute dots) in one logical line: each can add
/// an AST level without a bracket (`a + a + ... + a`, `a.b.c...`).
pub const MAX_LINE_OPERATORS: usize = 2000;

/// Byte offset of every line start, for offset → line/column.
pub struct LineIndex<'a> {
    source: &'a str,
    starts: Vec<usize>,
    /// Whether the source is all ASCII, so that a column is a byte count.
    ascii: bool,
}

impl<'a> LineIndex<'a> {
    pub fn new(source: &'a str) -> Self {
        let mut starts = vec![0];
        let bytes = source.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // eight bytes at a time past runs without line breaks
            if let Some(word) = bytes.get(i..i + 8) {
                let word = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
                if !has_byte(word, b'\n') && !has_byte(word, b'\r') {
                    i += 8;
                    continue;
                }
            }
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        LineIndex { source, starts, ascii: source.is_ascii() }
    }

    /// The source the index was built from.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// 1-based (line, column) of a byte offset.
    pub fn position(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.source.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts.get(line).copied().unwrap_or(0);
        let col = match self.source.get(start..offset) {
            Some(_) if self.ascii => offset - start,
            Some(text) => text.chars().count(),
            None => offset - start,
        };
        (to_u32(line + 1), to_u32(col + 1))
    }

    pub fn span(&self, range: TextRange) -> Span {
        self.span_of(usize::from(range.start()), usize::from(range.end()))
    }

    pub fn span_of(&self, start: usize, end: usize) -> Span {
        let (line, col) = self.position(start);
        let (end_line, end_col) = self.position(end);
        Span { line, col, end_line, end_col }
    }
}

/// Whether any byte of `word` is `byte` (the classic "has zero byte" test on `word ^ byte…`).
fn has_byte(word: u64, byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS != 0
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Parse a module; a syntax error or a nesting limit becomes a module diagnostic.
pub fn parse_module(source: &str, index: &LineIndex) -> Result<ast::Suite, Diagnostic> {
    if let Some((offset, message)) = prescan_nesting(source) {
        return Err(Diagnostic {
            code: rules::TOO_DEEP.code.to_string(),
            severity: rules::TOO_DEEP.severity,
            message,
            hint: Some(rules::TOO_DEEP.hint.to_string()),
            span: index.span_of(offset, offset),
            caused_by: None,
        });
    }
    match ruff_python_parser::parse_module(source) {
        Ok(parsed) => Ok(parsed.into_syntax().body),
        Err(err) => {
            let offset = usize::from(err.location.start());
            Err(Diagnostic {
                code: rules::SYNTAX_ERROR.code.to_string(),
                severity: rules::SYNTAX_ERROR.severity,
                message: format!("syntax error: {}", err.error),
                hint: Some(rules::SYNTAX_ERROR.hint.to_string()),
                span: index.span_of(offset, offset),
                caused_by: None,
            })
        }
    }
}

/// A `def`'s range from its `def` (or `async`) keyword, where Python's `ast` puts the
/// function's line; Ruff's range starts at the first decorator.
pub fn def_range(source: &str, def: &StmtFunctionDef) -> TextRange {
    if def.decorator_list.is_empty() {
        return def.range();
    }
    let bytes = source.as_bytes();
    // only blanks and line continuations separate `async`, `def` and the name
    let back_over_blanks = |mut i: usize| {
        while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\x0c' | b'\\' | b'\n' | b'\r') {
            i -= 1;
        }
        i
    };
    let mut start = back_over_blanks(usize::from(def.name.range().start()));
    if start >= 3 && &bytes[start - 3..start] == b"def" {
        start -= 3;
        let before = back_over_blanks(start);
        if def.is_async && before >= 5 && &bytes[before - 5..before] == b"async" {
            start = before - 5;
        }
    }
    TextRange::new(TextSize::try_from(start).unwrap_or(def.range().start()), def.range().end())
}

/// The blocks of an `if` statement in source order: its body, then each `elif`'s and the
/// `else`'s (Ruff keeps an `elif` chain flat, as clauses, rather than nested).
pub fn if_blocks(s: &StmtIf) -> impl Iterator<Item = &[Stmt]> {
    std::iter::once(&s.body[..]).chain(s.elif_else_clauses.iter().map(|c: &ElifElseClause| &c.body[..]))
}

/// Drop a module's statements without recursing through nested blocks.
///
/// Dropping an AST recurses once per nesting level, and `elif` chains nest without any
/// indentation (5,000 `elif`s overflow a 1 MiB stack). Nested statement blocks are moved onto
/// an explicit work list first; what remains (expressions) is bounded by the pre-scan limits.
pub fn drop_statements(body: ast::Suite) {
    let mut work: Vec<ast::Suite> = vec![body];
    let take = std::mem::take::<ast::Suite>;
    while let Some(block) = work.pop() {
        for stmt in block {
            match stmt {
                Stmt::If(mut s) => {
                    work.push(take(&mut s.body));
                    for clause in &mut s.elif_else_clauses {
                        work.push(take(&mut clause.body));
                    }
                }
                Stmt::For(mut s) => {
                    work.push(take(&mut s.body));
                    work.push(take(&mut s.orelse));
                }
                Stmt::While(mut s) => {
                    work.push(take(&mut s.body));
                    work.push(take(&mut s.orelse));
                }
                Stmt::FunctionDef(mut s) => work.push(take(&mut s.body)),
                Stmt::ClassDef(mut s) => work.push(take(&mut s.body)),
                Stmt::With(mut s) => work.push(take(&mut s.body)),
                Stmt::Match(mut s) => {
                    for case in &mut s.cases {
                        work.push(take(&mut case.body));
                    }
                }
                Stmt::Try(mut s) => {
                    work.push(take(&mut s.body));
                    work.push(take(&mut s.orelse));
                    work.push(take(&mut s.finalbody));
                    for h in &mut s.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        work.push(take(&mut h.body));
                    }
                }
                other => drop(other),
            }
        }
    }
}

/// One linear pass over the source that finds bracket depth, indentation depth and runs of
/// prefix operators, skipping strings and comments. Returns the offending offset and message.
/// The parser builds the AST without recursion, but dropping and walking a very deep AST
/// recurses, so anything deeper than CPython accepts is refused here.
pub fn prescan_nesting(source: &str) -> Option<(usize, String)> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut indents: Vec<usize> = vec![0];
    let mut at_line_start = true;
    let mut prefix_run = 0usize;
    let mut line_ops = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if at_line_start {
            at_line_start = false;
            if depth == 0 {
                let mut width = 0usize;
                let mut j = i;
                while j < bytes.len() {
                    match bytes[j] {
                        b' ' => width += 1,
                        b'\t' => width = (width / 8 + 1) * 8,
                        b'\x0c' => width = 0,
                        _ => break,
                    }
                    j += 1;
                }
                let blank = matches!(bytes.get(j), None | Some(b'\n') | Some(b'\r') | Some(b'#'));
                if !blank {
                    while indents.last().is_some_and(|&top| width < top) {
                        indents.pop();
                    }
                    if indents.last().is_some_and(|&top| width > top) {
                        indents.push(width);
                        if indents.len() > MAX_INDENT_DEPTH + 1 {
                            return Some((j, format!("too many levels of indentation (limit {MAX_INDENT_DEPTH})")));
                        }
                    }
                }
                i = j;
                continue;
            }
        }
        match b {
            b'\n' | b'\r' => {
                at_line_start = true;
                prefix_run = 0;
                if depth == 0 {
                    line_ops = 0;
                }
            }
            b'\\' => {
                // explicit line continuation: the next line belongs to this logical line
                if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') {
                    i += 1;
                }
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i);
                prefix_run = 0;
                continue;
            }
            b'(' | b'[' | b'{' => {
                // `f(a)(b)`, `x[0][1]`: a call or subscript on a bracketed result nests the
                // AST once more without nesting brackets
                if b != b'{' && i > 0 && matches!(bytes[i - 1], b')' | b']') {
                    line_ops += 1;
                    if line_ops > MAX_LINE_OPERATORS {
                        return Some((i, format!("more than {MAX_LINE_OPERATORS} operators in one statement")));
                    }
                }
                depth += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return Some((i, format!("too many nested parentheses (limit {MAX_BRACKET_DEPTH})")));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'-' | b'+' | b'~' => {
                line_ops += 1;
                if line_ops > MAX_LINE_OPERATORS {
                    return Some((i, format!("more than {MAX_LINE_OPERATORS} operators in one statement")));
                }
                prefix_run += 1;
                if prefix_run > MAX_OPERATOR_RUN {
                    return Some((i, format!("more than {MAX_OPERATOR_RUN} operators in a row")));
                }
            }
            b' ' | b'\t' => {}
            b'n' if bytes.get(i..i + 4) == Some(b"not ") => {
                prefix_run += 1;
                if prefix_run > MAX_OPERATOR_RUN {
                    return Some((i, format!("more than {MAX_OPERATOR_RUN} operators in a row")));
                }
                i += 3;
            }
            // an attribute dot (not the dot of a float literal such as `1.5`)
            b'.' if !bytes.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') => prefix_run = 0,
            b'*' | b'/' | b'@' | b'%' | b'&' | b'|' | b'^' | b'<' | b'>' | b'.' => {
                line_ops += 1;
                if line_ops > MAX_LINE_OPERATORS {
                    return Some((i, format!("more than {MAX_LINE_OPERATORS} operators in one statement")));
                }
                prefix_run = 0;
            }
            b'i' if bytes.get(i..i + 3) == Some(b"if ") => {
                line_ops += 1;
                if line_ops > MAX_LINE_OPERATORS {
                    return Some((i, format!("more than {MAX_LINE_OPERATORS} operators in one statement")));
                }
                prefix_run = 0;
                i += 2;
            }
            _ => prefix_run = 0,
        }
        i += 1;
    }
    None
}

/// Skip a string literal starting at `start` (a quote); returns the offset after it.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut i = if triple { start + 3 } else { start + 1 };
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if b == quote {
            if !triple {
                return i + 1;
            }
            if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                return i + 3;
            }
        } else if !triple && (b == b'\n' || b == b'\r') {
            return i; // unterminated: let the parser report it
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_chars() {
        let src = "ab\nñx = 1\r\nz";
        let idx = LineIndex::new(src);
        assert_eq!(idx.position(0), (1, 1));
        assert_eq!(idx.position(3), (2, 1));
        assert_eq!(idx.position(5), (2, 2)); // after 'ñ' (2 bytes)
        assert_eq!(idx.position(src.len() - 1), (3, 1));
    }

    #[test]
    fn line_starts_match_a_byte_by_byte_scan() {
        let pieces = ["a", "bc", "\n", "\r", "\r\n", "ñ", "        ", "x = 1\n", "\n\n", "日本"];
        let mut state: u32 = 12345;
        for _ in 0..3000 {
            let mut src = String::new();
            for _ in 0..(state % 40) {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                src.push_str(pieces[(state >> 16) as usize % pieces.len()]);
            }
            let mut expected = vec![0];
            let bytes = src.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'\n' || (bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                    expected.push(i + 1);
                }
                i += 1;
            }
            assert_eq!(LineIndex::new(&src).starts, expected, "{src:?}");
        }
    }

    #[test]
    fn deep_brackets_are_refused_before_parsing() {
        let src = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        assert!(prescan_nesting(&src).is_some());
        let ok = format!("x = {}1{}\n", "(".repeat(50), ")".repeat(50));
        assert!(prescan_nesting(&ok).is_none());
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        let src = format!("x = '{}'  # {}\ny = \"\"\"{}\"\"\"\n", "(".repeat(500), "[".repeat(500), "{".repeat(500));
        assert!(prescan_nesting(&src).is_none());
    }

    #[test]
    fn deep_indentation_is_refused() {
        let mut src = String::new();
        for level in 0..150 {
            src.push_str(&" ".repeat(level));
            src.push_str("if x:\n");
        }
        assert!(prescan_nesting(&src).is_some());
    }
}
