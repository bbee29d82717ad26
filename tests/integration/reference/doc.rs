//! Just enough Markdown for the reference checks: headings, the first table under a heading,
//! fenced code blocks, and names in backticks. Lines inside code fences are never headings.

use super::read;

/// A Markdown file cut into what the checks need.
pub struct Doc {
    pub name: &'static str,
    pub text: String,
}

impl Doc {
    pub fn load(name: &'static str) -> Doc {
        Doc { name, text: read(name) }
    }

    /// Lines outside code fences, and whether each is inside one.
    pub fn lines(&self) -> Vec<(bool, &str)> {
        let mut fenced = false;
        self.text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("```") {
                    fenced = !fenced;
                    (true, l)
                } else {
                    (fenced, l)
                }
            })
            .collect()
    }

    /// The lines under the first heading containing `marker`, up to the next heading.
    pub fn section(&self, marker: &str) -> Vec<&str> {
        let lines = self.lines();
        let is_heading = |&(fenced, l): &(bool, &str)| !fenced && l.starts_with('#');
        let start = lines
            .iter()
            .position(|x| is_heading(x) && x.1.contains(marker))
            .unwrap_or_else(|| panic!("{}: no heading names {marker}", self.name));
        lines[start + 1..]
            .iter()
            .take_while(|x| !is_heading(x))
            .map(|x| x.1)
            .collect()
    }

    /// The body rows of the first table under the heading naming `marker`, cells trimmed.
    pub fn table(&self, marker: &str) -> Vec<Vec<String>> {
        let rows: Vec<Vec<String>> = self
            .section(marker)
            .into_iter()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2) // the header and the separator
            .map(|l| {
                let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
                inner.split('|').map(|c| c.trim().to_string()).collect()
            })
            .collect();
        assert!(
            !rows.is_empty(),
            "{}: no table under the heading naming {marker}",
            self.name
        );
        rows
    }

    /// The code blocks fenced as `lang`.
    pub fn code_blocks(&self, lang: &str) -> Vec<String> {
        let mut blocks = Vec::new();
        let mut current: Option<String> = None;
        for line in self.text.lines() {
            let fence = line.trim_start().strip_prefix("```");
            match (&mut current, fence) {
                (None, Some(tag)) if tag.trim() == lang => current = Some(String::new()),
                (Some(block), Some(_)) => {
                    blocks.push(std::mem::take(block));
                    current = None;
                }
                (Some(block), None) => {
                    block.push_str(line);
                    block.push('\n');
                }
                _ => {}
            }
        }
        blocks
    }

    /// Whether `name` appears in code, alone (`` `Star` ``) or applied (`` `Star(hosts: 16)` ``).
    pub fn mentions(&self, name: &str) -> bool {
        self.text.contains(&format!("`{name}`")) || self.text.contains(&format!("`{name}("))
    }
}

/// The text inside one pair of backticks, if the cell is exactly that.
pub fn code(cell: &str) -> Option<&str> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`')).then_some(inner)
}
