//! Building the HTML page: escaping, tables, sections and the page shell (inline CSS, no
//! scripts, nothing fetched), so that one file opens anywhere.

use std::fmt::Write;

/// `s` with `&`, `<`, `>` and `"` escaped, for text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// A number as the report's tables print it: three decimals.
pub fn num(x: f64) -> String {
    format!("{x:.3}")
}

/// A page under construction.
#[derive(Default)]
pub struct Page {
    body: String,
}

impl Page {
    /// A heading of level 2.
    pub fn section(&mut self, id: &str, title: &str) {
        let _ = writeln!(self.body, "<h2 id=\"{}\">{}</h2>", escape(id), escape(title));
    }

    /// A paragraph of plain text.
    pub fn text(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// Markup already escaped or built here (an SVG plot).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }

    /// A figure holding one SVG plot.
    pub fn plot(&mut self, svg: &str) {
        let _ = writeln!(self.body, "<figure>{svg}</figure>");
    }

    /// Preformatted text, optionally folded under `summary`.
    pub fn pre(&mut self, text: &str, summary: Option<&str>) {
        match summary {
            Some(s) => {
                let _ = writeln!(
                    self.body,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    escape(s),
                    escape(text)
                );
            }
            None => {
                let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
            }
        }
    }

    /// A table with `id`, a header row and rows `(row id, cells)`; cells are text, escaped here.
    pub fn table(&mut self, id: &str, header: &[&str], rows: &[(String, Vec<String>)]) {
        let _ = write!(self.body, "<table id=\"{}\"><thead><tr>", escape(id));
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr></thead><tbody>\n");
        for (row_id, cells) in rows {
            let _ = write!(self.body, "<tr id=\"{}\">", escape(row_id));
            for c in cells {
                let _ = write!(self.body, "<td>{}</td>", escape(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table>\n");
    }

    /// The whole document, titled `title`.
    pub fn finish(self, title: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>{STYLE}</style></head>\n<body><h1>{t}</h1>\n{}</body></html>\n",
            self.body,
            t = escape(title)
        )
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:960px;color:#222}\
h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}\
th{background:#f4f4f4}td:first-child{text-align:left}pre{background:#f8f8f8;padding:.8em;overflow-x:auto}\
figure{margin:1em 0}svg{max-width:100%;height:auto}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
