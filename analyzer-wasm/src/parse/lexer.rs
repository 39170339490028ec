//! A bytewise lexer for the common subset of Python, producing exactly the tokens that
//! rustpython-parser's own lexer (with its soft-keyword pass) produces, or giving up.
//!
//! rustpython's lexer walks a window of `char`s (a `rotate_left` and a `memmove` per character)
//! and tests every token start that is not an ASCII letter against the Unicode identifier
//! tables (a binary search per space, bracket or operator); in wasm that was about a sixth of
//! a whole analysis. This one reads bytes and handles what ordinary code is made of: ASCII
//! names and keywords, operators, decimal integers and floats, string literals with any
//! prefix (their text is taken verbatim, as rustpython does), comments, blank lines,
//! space indentation and backslash continuations.
//!
//! Anything else gives up ([`tokens`] returns `None`): a non-ASCII character outside strings and
//! comments, a tab or form feed in indentation, a byte-order mark, hexadecimal, octal, binary,
//! complex or underscored numbers, a float starting with `.`, a carriage return inside a
//! string, `match`/`case`/`type` at the start of a logical line (where the soft-keyword pass
//! looks ahead), and every lexical error. `super::parse_source` then parses with rustpython's
//! own lexer, so errors and rare forms are reported exactly as before. Tokens that are
//! produced are identical to rustpython's, position for position (tests compare both lexers
//! on the corpus and on edge cases).

use rustpython_parser::ast::bigint::BigInt;
use rustpython_parser::text_size::{TextRange, TextSize};
use rustpython_parser::{StringKind, Tok};

/// The keyword token of `name`, as rustpython's `lexer::KEYWORDS` has it (a `match` rather
/// than its hash map: one length switch and a comparison; a test checks both agree).
fn keyword(name: &str) -> Option<Tok> {
    Some(match name {
        "False" => Tok::False,
        "None" => Tok::None,
        "True" => Tok::True,
        "and" => Tok::And,
        "as" => Tok::As,
        "assert" => Tok::Assert,
        "async" => Tok::Async,
        "await" => Tok::Await,
        "break" => Tok::Break,
        "case" => Tok::Case,
        "class" => Tok::Class,
        "continue" => Tok::Continue,
        "def" => Tok::Def,
        "del" => Tok::Del,
        "elif" => Tok::Elif,
        "else" => Tok::Else,
        "except" => Tok::Except,
        "finally" => Tok::Finally,
        "for" => Tok::For,
        "from" => Tok::From,
        "global" => Tok::Global,
        "if" => Tok::If,
        "import" => Tok::Import,
        "in" => Tok::In,
        "is" => Tok::Is,
        "lambda" => Tok::Lambda,
        "match" => Tok::Match,
        "nonlocal" => Tok::Nonlocal,
        "not" => Tok::Not,
        "or" => Tok::Or,
        "pass" => Tok::Pass,
        "raise" => Tok::Raise,
        "return" => Tok::Return,
        "try" => Tok::Try,
        "type" => Tok::Type,
        "while" => Tok::While,
        "with" => Tok::With,
        "yield" => Tok::Yield,
        _ => return None,
    })
}

/// Why the bytewise lexer stopped; the source is then lexed by rustpython's lexer.
struct GiveUp;

/// Every token of `text` (as rustpython's `lexer::lex(text, Mode::Module)` yields them, up to
/// and without `EndOfFile`), or `None` where this lexer gives up.
pub fn tokens(text: &str) -> Option<Vec<(Tok, TextRange)>> {
    let mut lexer = Lexer {
        src: text.as_bytes(),
        text,
        pos: 0,
        at_line_start: true,
        nesting: 0,
        indents: vec![0],
        // about one token per four bytes of ordinary code
        out: Vec::with_capacity(text.len() / 4 + 16),
        done: false,
    };
    while !lexer.done {
        lexer.step().ok()?;
    }
    Some(lexer.out)
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    at_line_start: bool,
    nesting: u32,
    /// Indentation levels in spaces; the bottom 0 is never popped.
    indents: Vec<u32>,
    out: Vec<(Tok, TextRange)>,
    done: bool,
}

impl Lexer<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.src.get(at).copied()
    }

    fn peek(&self) -> Option<u8> {
        self.byte(self.pos)
    }

    fn at(&self) -> TextSize {
        // Sources are at most MAX_INPUT_BYTES (16 MiB) in the hosts; a larger offset gives up.
        TextSize::new(u32::try_from(self.pos).unwrap_or(u32::MAX))
    }

    fn emit(&mut self, tok: Tok, start: usize) {
        let start = TextSize::new(u32::try_from(start).unwrap_or(u32::MAX));
        self.out.push((tok, TextRange::new(start, self.at())));
    }

    fn emit_empty(&mut self, tok: Tok) {
        let at = self.at();
        self.out.push((tok, TextRange::empty(at)));
    }

    /// Whether the last token ends a logical line (the soft-keyword pass's `start_of_line`).
    fn after_line_start(&self) -> bool {
        self.out.last().is_none_or(|(tok, _)| matches!(tok, Tok::Newline | Tok::Indent | Tok::Dedent))
    }

    /// One step of rustpython's `inner_next` loop: indentation at the start of a line, then
    /// one dispatch on the next character (which may emit nothing, for whitespace).
    fn step(&mut self) -> Result<(), GiveUp> {
        if self.pos == 0 && (self.src.len() >= u32::MAX as usize || self.src.starts_with("\u{feff}".as_bytes())) {
            return Err(GiveUp); // offsets past u32, or a byte-order mark rustpython skips
        }
        if self.at_line_start {
            self.indentation()?;
        }
        match self.peek() {
            None => {
                if self.nesting > 0 {
                    return Err(GiveUp);
                }
                if !self.at_line_start {
                    self.at_line_start = true;
                    self.emit_empty(Tok::Newline);
                }
                while self.indents.len() > 1 {
                    self.indents.pop();
                    self.emit_empty(Tok::Dedent);
                }
                self.done = true;
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.name_or_string(c),
            Some(c) if c >= 0x80 => Err(GiveUp),
            Some(c) => self.character(c),
        }
    }

    /// rustpython's `eat_indentation` and `handle_indentations`, for space indentation.
    fn indentation(&mut self) -> Result<(), GiveUp> {
        let mut spaces: u32 = 0;
        loop {
            match self.peek() {
                Some(b' ') => {
                    self.pos += 1;
                    spaces += 1;
                }
                Some(b'#') => {
                    self.comment();
                    spaces = 0;
                }
                Some(b'\n') => {
                    self.pos += 1;
                    spaces = 0;
                }
                Some(b'\r') => {
                    self.pos += 1;
                    if self.peek() == Some(b'\n') {
                        self.pos += 1;
                    }
                    spaces = 0;
                }
                None => {
                    spaces = 0;
                    break;
                }
                Some(b'\t' | b'\x0c') => return Err(GiveUp),
                Some(_) => {
                    self.at_line_start = false;
                    break;
                }
            }
        }
        if self.nesting != 0 {
            return Ok(());
        }
        let current = self.indents.last().copied().unwrap_or(0);
        if spaces > current {
            self.indents.push(spaces);
            self.emit(Tok::Indent, self.pos - spaces as usize);
        } else if spaces < current {
            loop {
                let current = self.indents.last().copied().unwrap_or(0);
                if spaces < current {
                    self.indents.pop();
                    self.emit_empty(Tok::Dedent);
                } else if spaces == current {
                    break;
                } else {
                    return Err(GiveUp); // unindent does not match any outer level
                }
            }
        }
        Ok(())
    }

    fn comment(&mut self) {
        while !matches!(self.peek(), None | Some(b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// A name, a keyword, or a string with a prefix (`r"…"`, `rb'…'`, …).
    fn name_or_string(&mut self, c: u8) -> Result<(), GiveUp> {
        let quote = |b: Option<u8>| matches!(b, Some(b'"' | b'\''));
        if quote(self.byte(self.pos + 1)) {
            if let Ok(kind) = StringKind::try_from(c as char) {
                return self.string(kind, 1);
            }
        }
        if let Some(c2) = self.byte(self.pos + 1).filter(u8::is_ascii) {
            if quote(self.byte(self.pos + 2)) {
                if let Ok(kind) = StringKind::try_from([c as char, c2 as char]) {
                    return self.string(kind, 2);
                }
            }
        }
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.pos += 1;
        }
        if self.peek().is_some_and(|b| b >= 0x80) {
            return Err(GiveUp); // perhaps a non-ASCII identifier character
        }
        let name = &self.text[start..self.pos];
        let tok = match keyword(name) {
            Some(Tok::Match | Tok::Case | Tok::Type) if self.after_line_start() => return Err(GiveUp),
            // not at the start of a logical line, the soft-keyword pass makes them names
            Some(Tok::Match | Tok::Case | Tok::Type) | None => Tok::Name { name: name.to_string() },
            Some(keyword) => keyword,
        };
        self.emit(tok, start);
        Ok(())
    }

    /// rustpython's `lex_string`: the text between the quotes, verbatim.
    fn string(&mut self, kind: StringKind, prefix: usize) -> Result<(), GiveUp> {
        let start = self.pos;
        self.pos += prefix;
        let quote = self.peek().ok_or(GiveUp)?;
        self.pos += 1;
        let triple = self.peek() == Some(quote) && self.byte(self.pos + 1) == Some(quote);
        if triple {
            self.pos += 2;
        }
        let content_start = self.pos;
        let content_end = loop {
            match self.peek() {
                None | Some(b'\r') => return Err(GiveUp),
                Some(b'\\') => match self.byte(self.pos + 1) {
                    // rustpython turns a carriage return into '\n' in the text
                    None | Some(b'\r') => return Err(GiveUp),
                    // the escaped character is kept; a multi-byte one's other bytes are
                    // never special and follow as ordinary bytes
                    Some(_) => self.pos += 2,
                },
                Some(b'\n') if !triple => return Err(GiveUp),
                Some(b) if b == quote => {
                    if !triple {
                        self.pos += 1;
                        break self.pos - 1;
                    }
                    if self.byte(self.pos + 1) == Some(quote) && self.byte(self.pos + 2) == Some(quote) {
                        self.pos += 3;
                        break self.pos - 3;
                    }
                    self.pos += 1;
                }
                Some(_) => self.pos += 1,
            }
        };
        let value = self.text[content_start..content_end].to_string();
        self.emit(Tok::String { value, kind, triple_quoted: triple }, start);
        Ok(())
    }

    /// rustpython's `lex_normal_number` for decimal integers and floats without underscores.
    fn number(&mut self) -> Result<(), GiveUp> {
        let start = self.pos;
        if self.peek() == Some(b'0') && matches!(self.byte(self.pos + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')) {
            return Err(GiveUp);
        }
        self.digits()?;
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.pos += 1;
            self.digits()?;
            if matches!(self.peek(), Some(b'e' | b'E')) {
                self.exponent()?;
            }
        } else if self.at_exponent() {
            float = true;
            self.exponent()?;
        }
        if matches!(self.peek(), Some(b'j' | b'J')) {
            return Err(GiveUp); // complex
        }
        let text = &self.text[start..self.pos];
        let tok = if float {
            Tok::Float { value: text.parse::<f64>().map_err(|_| GiveUp)? }
        } else {
            // leading zeros ("007", an error, or "00") and long literals: rustpython's path
            if (text.len() > 1 && text.starts_with('0')) || text.len() > 18 {
                return Err(GiveUp);
            }
            Tok::Int { value: BigInt::from(text.parse::<u64>().map_err(|_| GiveUp)?) }
        };
        self.emit(tok, start);
        Ok(())
    }

    /// A run of decimal digits; an underscore gives up.
    fn digits(&mut self) -> Result<(), GiveUp> {
        while let Some(b) = self.peek() {
            match b {
                b'0'..=b'9' => self.pos += 1,
                b'_' => return Err(GiveUp),
                _ => break,
            }
        }
        Ok(())
    }

    /// `[eE][-+]?[0-9]+` follows (rustpython's `at_exponent`).
    fn at_exponent(&self) -> bool {
        matches!(
            (self.peek(), self.byte(self.pos + 1), self.byte(self.pos + 2)),
            (Some(b'e' | b'E'), Some(b'+' | b'-'), Some(b'0'..=b'9')) | (Some(b'e' | b'E'), Some(b'0'..=b'9'), _)
        )
    }

    /// `e`, an optional sign and the digits; no digits leave a text `f64` refuses.
    fn exponent(&mut self) -> Result<(), GiveUp> {
        self.pos += 1;
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        self.digits()
    }

    /// rustpython's `consume_character` for everything but names and non-ASCII.
    fn character(&mut self, c: u8) -> Result<(), GiveUp> {
        let start = self.pos;
        let next = self.byte(self.pos + 1);
        let after = self.byte(self.pos + 2);
        // (token, its length) for operators and delimiters
        let (tok, len) = match c {
            b'0'..=b'9' => return self.number(),
            b'#' => {
                self.comment();
                return Ok(());
            }
            b'"' | b'\'' => return self.string(StringKind::String, 0),
            b'\n' | b'\r' => {
                self.pos += 1;
                if c == b'\r' && self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
                if self.nesting == 0 {
                    self.at_line_start = true;
                    self.emit(Tok::Newline, start);
                }
                return Ok(());
            }
            b' ' | b'\t' | b'\x0c' => {
                while matches!(self.peek(), Some(b' ' | b'\t' | b'\x0c')) {
                    self.pos += 1;
                }
                return Ok(());
            }
            b'\\' => {
                self.pos += 1;
                match self.peek() {
                    Some(b'\n') => self.pos += 1,
                    Some(b'\r') => {
                        self.pos += 1;
                        if self.peek() == Some(b'\n') {
                            self.pos += 1;
                        }
                    }
                    _ => return Err(GiveUp),
                }
                if self.peek().is_none() {
                    return Err(GiveUp);
                }
                return Ok(());
            }
            b'.' => match (next, after) {
                (Some(b'0'..=b'9'), _) => return Err(GiveUp), // a float like `.5`
                (Some(b'.'), Some(b'.')) => (Tok::Ellipsis, 3),
                _ => (Tok::Dot, 1),
            },
            b'(' | b'[' | b'{' => {
                self.nesting += 1;
                (match c { b'(' => Tok::Lpar, b'[' => Tok::Lsqb, _ => Tok::Lbrace }, 1)
            }
            b')' | b']' | b'}' => {
                if self.nesting == 0 {
                    return Err(GiveUp);
                }
                self.nesting -= 1;
                (match c { b')' => Tok::Rpar, b']' => Tok::Rsqb, _ => Tok::Rbrace }, 1)
            }
            b'=' => if next == Some(b'=') { (Tok::EqEqual, 2) } else { (Tok::Equal, 1) },
            b'+' => if next == Some(b'=') { (Tok::PlusEqual, 2) } else { (Tok::Plus, 1) },
            b'%' => if next == Some(b'=') { (Tok::PercentEqual, 2) } else { (Tok::Percent, 1) },
            b'|' => if next == Some(b'=') { (Tok::VbarEqual, 2) } else { (Tok::Vbar, 1) },
            b'^' => if next == Some(b'=') { (Tok::CircumflexEqual, 2) } else { (Tok::CircumFlex, 1) },
            b'&' => if next == Some(b'=') { (Tok::AmperEqual, 2) } else { (Tok::Amper, 1) },
            b'@' => if next == Some(b'=') { (Tok::AtEqual, 2) } else { (Tok::At, 1) },
            b':' => if next == Some(b'=') { (Tok::ColonEqual, 2) } else { (Tok::Colon, 1) },
            b'!' if next == Some(b'=') => (Tok::NotEqual, 2),
            b'~' => (Tok::Tilde, 1),
            b';' => (Tok::Semi, 1),
            b',' => (Tok::Comma, 1),
            b'-' => match next {
                Some(b'=') => (Tok::MinusEqual, 2),
                Some(b'>') => (Tok::Rarrow, 2),
                _ => (Tok::Minus, 1),
            },
            b'*' => match (next, after) {
                (Some(b'='), _) => (Tok::StarEqual, 2),
                (Some(b'*'), Some(b'=')) => (Tok::DoubleStarEqual, 3),
                (Some(b'*'), _) => (Tok::DoubleStar, 2),
                _ => (Tok::Star, 1),
            },
            b'/' => match (next, after) {
                (Some(b'='), _) => (Tok::SlashEqual, 2),
                (Some(b'/'), Some(b'=')) => (Tok::DoubleSlashEqual, 3),
                (Some(b'/'), _) => (Tok::DoubleSlash, 2),
                _ => (Tok::Slash, 1),
            },
            b'<' => match (next, after) {
                (Some(b'<'), Some(b'=')) => (Tok::LeftShiftEqual, 3),
                (Some(b'<'), _) => (Tok::LeftShift, 2),
                (Some(b'='), _) => (Tok::LessEqual, 2),
                _ => (Tok::Less, 1),
            },
            b'>' => match (next, after) {
                (Some(b'>'), Some(b'=')) => (Tok::RightShiftEqual, 3),
                (Some(b'>'), _) => (Tok::RightShift, 2),
                (Some(b'='), _) => (Tok::GreaterEqual, 2),
                _ => (Tok::Greater, 1),
            },
            _ => return Err(GiveUp), // `$`, `?`, a backquote, control characters: errors
        };
        self.pos += len;
        self.emit(tok, start);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
