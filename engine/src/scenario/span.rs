//! A small RON span scanner: it reads scenario text into a tree of byte ranges without knowing any
//! Rust type, so `--set` overrides can edit the text in place and error messages can point at the
//! value a dotted path (`applications[0].NumConnections`) names. It is deliberately lenient about
//! what a value means (ron's deserializer judges that) but strict about structure: unbalanced
//! brackets and unterminated strings, chars and comments are errors carrying a byte offset.
//!
//! Path lookup treats a one-item tuple such as a newtype variant (`RoceNic((PortRate: ..))`,
//! `Some(..)`) as transparent, so `nic.PortRate` reaches the struct inside it.

pub(crate) use super::lex::floor_char_boundary;
use super::lex::{MAX_DEPTH, Scanner};
pub use super::lex::{ScanError, line_col, offset_of};
pub use super::path::{FieldPath, PathError, PathSegment, locate, value_span};

/// A byte range `start..end` in the source text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The spanned text of `source` (empty if out of range).
    pub fn text(self, source: &str) -> &str {
        source.get(self.start..self.end).unwrap_or("")
    }
}

/// One value with its byte range (for a named struct or tuple, from the name to the `)`).
#[derive(Clone, PartialEq, Debug)]
pub struct Node {
    /// Its bytes in the source.
    pub span: Span,
    /// What kind of value it is.
    pub kind: NodeKind,
}

/// What a `Node` is, with what a rewrite needs of it.
#[derive(Clone, PartialEq, Debug)]
pub enum NodeKind {
    /// `(a: 1)`, `Name(a: 1)` or `()`. `close` is the offset of `)`; `trailing_comma` the offset of
    /// a comma after the last field, if any.
    Struct {
        /// The struct's or variant's name, if written.
        name: Option<String>,
        /// Its fields, in text order.
        fields: Vec<Field>,
        /// The offset of its `)`.
        close: usize,
        /// The offset of a comma after the last field.
        trailing_comma: Option<usize>,
    },
    /// `(1, 2)` or `Name(x)`: positional items, which includes newtype variants and `Some(..)`.
    Tuple {
        /// The variant's name, if written.
        name: Option<String>,
        /// Its items, in order.
        items: Vec<Node>,
    },
    /// `[a, b]`.
    List(Vec<Node>),
    /// `{k: v}`: its keys and values.
    Map(Vec<(Node, Node)>),
    /// A string or byte string, plain or raw.
    Str,
    /// A char or byte literal.
    Char,
    /// An integer or float literal.
    Number,
    /// A bare identifier: `true`, `None`, a unit variant such as `Ideal`.
    Ident,
}

/// One `name: value` of a struct.
#[derive(Clone, PartialEq, Debug)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its bytes.
    pub name_span: Span,
    /// Its value.
    pub value: Node,
}

/// A whole scenario: its `#![enable(..)]` attributes and its one top-level value.
#[derive(Clone, PartialEq, Debug)]
pub struct Document {
    /// The `#![enable(..)]` attributes' spans.
    pub attributes: Vec<Span>,
    /// The top-level value.
    pub root: Node,
}

impl Node {
    /// Looks through one-item tuples (newtype variants, `Some(..)`) to the value they wrap.
    pub fn unwrap_newtypes(&self) -> &Node {
        let mut node = self;
        while let NodeKind::Tuple { items, .. } = &node.kind {
            match items.as_slice() {
                [only] => node = only,
                _ => break,
            }
        }
        node
    }

    /// What this value is, for messages: "a string", "a list", ...
    pub fn describe(&self) -> &'static str {
        match self.kind {
            NodeKind::Struct { .. } => "a struct",
            NodeKind::Tuple { .. } => "a tuple",
            NodeKind::List(_) => "a list",
            NodeKind::Map(_) => "a map",
            NodeKind::Str => "a string",
            NodeKind::Char => "a char",
            NodeKind::Number => "a number",
            NodeKind::Ident => "a bare name",
        }
    }
}

/// Scans a scenario: optional `#![enable(..)]` attributes, then exactly one value.
pub fn parse_document(source: &str) -> Result<Document, ScanError> {
    let mut s = Scanner {
        src: source,
        pos: 0,
        depth: 0,
    };
    let mut attributes = Vec::new();
    s.skip_trivia()?;
    while s.peek() == Some(b'#') {
        let start = s.pos;
        s.pos += 1;
        s.expect(b'!', "`!` in `#![enable(..)]`")?;
        s.expect(b'[', "`[` in `#![enable(..)]`")?;
        s.value()?;
        s.skip_trivia()?;
        s.expect(b']', "`]` closing the attribute")?;
        attributes.push(Span { start, end: s.pos });
        s.skip_trivia()?;
    }
    let root = s.value()?;
    s.finish()?;
    Ok(Document { attributes, root })
}

/// Scans text that must be exactly one value (comments and whitespace around it allowed).
pub fn parse_value(text: &str) -> Result<Node, ScanError> {
    let mut s = Scanner {
        src: text,
        pos: 0,
        depth: 0,
    };
    let node = s.value()?;
    s.finish()?;
    Ok(node)
}

impl Scanner<'_> {
    fn value(&mut self) -> Result<Node, ScanError> {
        self.skip_trivia()?;
        let start = self.pos;
        let leaf = |s: &Self, kind| {
            Ok(Node {
                span: Span { start, end: s.pos },
                kind,
            })
        };
        let Some(c) = self.peek_char() else {
            return Err(self.unexpected("a value"));
        };
        match c {
            '(' => self.parens(start, None),
            '[' => self.list(start),
            '{' => self.map(start),
            '"' => {
                self.string()?;
                leaf(self, NodeKind::Str)
            }
            '\'' => {
                self.char_literal()?;
                leaf(self, NodeKind::Char)
            }
            'b' if matches!(self.peek_at(1), Some(b'"' | b'\'')) || self.raw_string_ahead(1) => {
                self.pos += 1;
                self.value().map(|n| Node {
                    span: Span { start, end: n.span.end },
                    kind: n.kind,
                })
            }
            'r' if self.raw_string_ahead(0) => {
                self.raw_string()?;
                leaf(self, NodeKind::Str)
            }
            '0'..='9' | '-' | '+' | '.' => {
                self.number();
                leaf(self, NodeKind::Number)
            }
            c if c.is_alphabetic() || c == '_' => {
                let name = self.ident().to_owned();
                let after_name = self.pos;
                self.skip_trivia()?;
                if self.peek() == Some(b'(') {
                    self.parens(start, Some(name))
                } else {
                    self.pos = after_name;
                    leaf(self, NodeKind::Ident)
                }
            }
            _ => Err(self.unexpected("a value")),
        }
    }

    fn enter(&mut self) -> Result<(), ScanError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScanError::TooDeep { offset: self.pos });
        }
        Ok(())
    }

    /// After an item inside brackets: a comma (returns its offset) or the closing bracket (None).
    fn separator(
        &mut self,
        open: (char, usize),
        close: u8,
        expected: &'static str,
    ) -> Result<Option<usize>, ScanError> {
        self.skip_trivia()?;
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(Some(self.pos - 1))
            }
            Some(b) if b == close => Ok(None),
            None => Err(ScanError::Unclosed {
                open: open.0,
                offset: open.1,
            }),
            Some(_) => Err(self.unexpected(expected)),
        }
    }

    /// Whether the next tokens are `name :`, i.e. the parens hold named fields.
    fn named_field_ahead(&mut self) -> Result<bool, ScanError> {
        let save = self.pos;
        let named = match self.peek_char() {
            Some(c) if c.is_alphabetic() || c == '_' => {
                self.ident();
                self.skip_trivia()?;
                self.peek() == Some(b':')
            }
            _ => false,
        };
        self.pos = save;
        Ok(named)
    }

    fn parens(&mut self, start: usize, name: Option<String>) -> Result<Node, ScanError> {
        self.enter()?;
        let open = ('(', self.pos);
        self.pos += 1;
        self.skip_trivia()?;
        let named = self.peek() == Some(b')') || self.named_field_ahead()?;
        let (mut fields, mut items, mut trailing_comma) = (Vec::new(), Vec::new(), None);
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b')') => break,
                None => {
                    return Err(ScanError::Unclosed {
                        open: open.0,
                        offset: open.1,
                    });
                }
                _ => {}
            }
            if named {
                let name_start = self.pos;
                if !self.peek_char().is_some_and(|c| c.is_alphabetic() || c == '_') {
                    return Err(self.unexpected("a field name"));
                }
                let field_name = self.ident().to_owned();
                let name_span = Span {
                    start: name_start,
                    end: self.pos,
                };
                self.skip_trivia()?;
                self.expect(b':', "`:` after the field name")?;
                let value = self.value()?;
                fields.push(Field {
                    name: field_name,
                    name_span,
                    value,
                });
            } else {
                items.push(self.value()?);
            }
            trailing_comma = self.separator(open, b')', "`,` or `)`")?;
        }
        let close = self.pos;
        self.pos += 1;
        self.depth -= 1;
        let span = Span { start, end: self.pos };
        let kind = if named {
            NodeKind::Struct {
                name,
                fields,
                close,
                trailing_comma,
            }
        } else {
            NodeKind::Tuple { name, items }
        };
        Ok(Node { span, kind })
    }

    fn list(&mut self, start: usize) -> Result<Node, ScanError> {
        self.enter()?;
        let open = ('[', self.pos);
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b']') => break,
                None => {
                    return Err(ScanError::Unclosed {
                        open: open.0,
                        offset: open.1,
                    });
                }
                _ => items.push(self.value()?),
            }
            self.separator(open, b']', "`,` or `]`")?;
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(Node {
            span: Span { start, end: self.pos },
            kind: NodeKind::List(items),
        })
    }

    fn map(&mut self, start: usize) -> Result<Node, ScanError> {
        self.enter()?;
        let open = ('{', self.pos);
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b'}') => break,
                None => {
                    return Err(ScanError::Unclosed {
                        open: open.0,
                        offset: open.1,
                    });
                }
                _ => {}
            }
            let key = self.value()?;
            self.skip_trivia()?;
            self.expect(b':', "`:` after the map key")?;
            entries.push((key, self.value()?));
            self.separator(open, b'}', "`,` or `}`")?;
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(Node {
            span: Span { start, end: self.pos },
            kind: NodeKind::Map(entries),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::SAMPLE;

    fn at<'s>(source: &'s str, path: &str) -> &'s str {
        value_span(source, &FieldPath::parse(path).unwrap())
            .unwrap()
            .text(source)
    }

    #[test]
    fn comments_strings_and_chars_hide_their_brackets() {
        let text = r##"(
            /* a ( comment /* nested ) */ still ] comment */
            a: "paren ( and \" quote ]", // trailing ) comment
            b: r#"raw " ) string"#,
            c: r"(",
            d: ')',
            e: '\'',
            f: b"bytes)",
            g: [1e-3, -0x1F, 1_000, -inf],
            h: {"k": (x: 1), 2: [3]},
            r#type: Unit,
        )"##;
        assert_eq!(at(text, "a"), r#""paren ( and \" quote ]""#);
        assert_eq!(at(text, "b"), r##"r#"raw " ) string"#"##);
        assert_eq!(at(text, "c"), r#"r"(""#);
        assert_eq!(at(text, "d"), "')'");
        assert_eq!(at(text, "e"), r"'\''");
        assert_eq!(at(text, "f"), r#"b"bytes)""#);
        assert_eq!(at(text, "g[0]"), "1e-3");
        assert_eq!(at(text, "g[1]"), "-0x1F");
        assert_eq!(at(text, "g[3]"), "-inf");
        assert_eq!(at(text, "type"), "Unit");
        let root = parse_document(text).unwrap().root;
        let NodeKind::Struct {
            fields, trailing_comma, ..
        } = &root.kind
        else {
            panic!("not a struct")
        };
        assert_eq!(fields.len(), 9);
        assert!(trailing_comma.is_some());
    }

    #[test]
    fn structural_errors_carry_offsets() {
        assert_eq!(
            parse_document("(a: 1"),
            Err(ScanError::Unclosed { open: '(', offset: 0 })
        );
        assert_eq!(
            parse_document("(a: [1, 2)"),
            Err(ScanError::Unexpected {
                expected: "`,` or `]`",
                found: ')',
                offset: 9
            })
        );
        assert_eq!(
            parse_document("(a: \"x)"),
            Err(ScanError::Unterminated {
                what: "string",
                offset: 4
            })
        );
        assert_eq!(
            parse_document("(a: r#\"x\")"),
            Err(ScanError::Unterminated {
                what: "raw string",
                offset: 4
            })
        );
        assert_eq!(
            parse_document("(a: 1) /* x"),
            Err(ScanError::Unterminated {
                what: "block comment",
                offset: 7
            })
        );
        assert_eq!(
            parse_document("(a: 1))"),
            Err(ScanError::Unexpected {
                expected: "the end of the text after the value",
                found: ')',
                offset: 6
            })
        );
        assert_eq!(
            parse_document("  "),
            Err(ScanError::UnexpectedEnd {
                expected: "a value",
                offset: 2
            })
        );
        let deep = "[".repeat(10_000);
        assert_eq!(parse_document(&deep), Err(ScanError::TooDeep { offset: MAX_DEPTH }));
    }

    #[test]
    fn never_panics_on_prefixes_or_garbage() {
        for end in (0..=SAMPLE.len()).filter(|&i| SAMPLE.is_char_boundary(i)) {
            let prefix = &SAMPLE[..end];
            let _ = parse_document(prefix);
            let _ = value_span(prefix, &FieldPath::parse("applications[0].NumConnections").unwrap());
        }
        for text in [
            "'",
            "'\\",
            "\"\\",
            "b",
            "r#",
            "r#\"",
            "#",
            "#![",
            "(a:",
            "{1:",
            "-",
            "'é",
            "\"é\\é\"",
            "/*/",
        ] {
            let _ = parse_document(text);
        }
    }
}
