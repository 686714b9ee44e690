//! A shell command line split as the shell splits it, as far as the
//! verdict needs: words (quotes and escapes removed), the pipe between
//! two commands, the separators of a list (`;`, `&&`, `||`, a newline),
//! and the two stderr redirections that leave a command's output its own
//! (`2>&1`, `2>/dev/null`). Anything else that changes what runs or where
//! its output goes — a substitution (`$(…)`, backquotes), another
//! redirection, a subshell or a group, a background `&`, a brace or a
//! heredoc, an unclosed quote — makes the line unread (`None`): the
//! verdict then reads the output alone.

/// A piece of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A word, its quotes and escapes removed.
    Word(String),
    /// `|`: the next command reads this one's output.
    Pipe,
    /// `;`, `&&`, `||` or a newline: the next command runs after this one.
    Separator,
    /// `2>&1` or `2>/dev/null`: stderr joined to stdout, or dropped.
    StderrRedirect,
}

/// The tokens of `line`, or `None` when it holds anything [`Token`] does
/// not stand for.
pub(super) fn tokens(line: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut word = String::new();
    // A word has begun (`''` is a word, empty).
    let mut in_word = false;
    // The word so far was written without quotes or escapes (`2` before
    // `>` is a file descriptor only so).
    let mut plain = true;
    let mut chars = line.chars().peekable();
    let end_word =
        |out: &mut Vec<Token>, word: &mut String, in_word: &mut bool, plain: &mut bool| {
            if *in_word {
                out.push(Token::Word(std::mem::take(word)));
                *in_word = false;
            }
            *plain = true;
        };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut out, &mut word, &mut in_word, &mut plain),
            '\n' => {
                end_word(&mut out, &mut word, &mut in_word, &mut plain);
                out.push(Token::Separator);
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            ';' => {
                end_word(&mut out, &mut word, &mut in_word, &mut plain);
                if chars.peek() == Some(&';') {
                    return None;
                }
                out.push(Token::Separator);
            }
            '&' => {
                // `&&` only: a background `&`, `&>` and `|&` are refused.
                if chars.next() != Some('&') {
                    return None;
                }
                end_word(&mut out, &mut word, &mut in_word, &mut plain);
                out.push(Token::Separator);
            }
            '|' => {
                end_word(&mut out, &mut word, &mut in_word, &mut plain);
                match chars.peek() {
                    Some('|') => {
                        chars.next();
                        out.push(Token::Separator);
                    }
                    Some('&') => return None,
                    _ => out.push(Token::Pipe),
                }
            }
            '>' => {
                // `2>&1` or `2>/dev/null` (`2> /dev/null`), nothing else.
                if !(in_word && plain && word == "2") {
                    return None;
                }
                let rest: String = {
                    while chars.peek() == Some(&' ') {
                        chars.next();
                    }
                    let mut target = String::new();
                    while let Some(&c) = chars.peek() {
                        if matches!(c, ' ' | '\t' | '\n' | ';' | '|' | '&' | ')' | '<' | '>')
                            && !(target.is_empty() && c == '&')
                        {
                            break;
                        }
                        target.push(c);
                        chars.next();
                    }
                    target
                };
                if !matches!(rest.as_str(), "&1" | "/dev/null") {
                    return None;
                }
                word.clear();
                in_word = false;
                plain = true;
                out.push(Token::StderrRedirect);
            }
            '\'' => {
                in_word = true;
                plain = false;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                plain = false;
                loop {
                    match chars.next()? {
                        '"' => break,
                        // Inside double quotes a backslash escapes only
                        // these; before anything else it stays.
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        // A substitution runs another command.
                        '`' => return None,
                        '$' if chars.peek() == Some(&'(') => return None,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                plain = false;
                match chars.next()? {
                    // A line continuation.
                    '\n' => {}
                    c => {
                        in_word = true;
                        word.push(c);
                    }
                }
            }
            '$' if chars.peek() == Some(&'(') => return None,
            '<' | '(' | ')' | '`' | '{' | '}' | '\r' => return None,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut out, &mut word, &mut in_word, &mut plain);
    Some(out)
}
