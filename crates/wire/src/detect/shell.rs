//! A shell command line split as the shell splits it, as far as the
//! verdict needs: words (quotes and escapes removed; a word that can be a
//! variable assignment, `GOFLAGS=-mod=mod`, told apart), the pipe between
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
    /// A word of the shape of a variable assignment, `NAME=value`: the
    /// name (`[A-Za-z_][A-Za-z0-9_]*`) written without quotes or escapes
    /// before the first `=`, the value in any quotes (`GOFLAGS="-mod=mod
    /// -v"`), both as written without them. Before a command's name it
    /// sets a variable (bash's `assignment_word`); anywhere else it is a
    /// word (`make CC=gcc`). `"A"=b` and `A\=b` are words.
    Assignment(String),
    /// `|`: the next command reads this one's output.
    Pipe,
    /// `;`, `&&`, `||` or a newline: the next command runs after this one.
    Separator,
    /// `2>&1` or `2>/dev/null`: stderr joined to stdout, or dropped.
    StderrRedirect,
}

/// What is known of the word being read.
#[derive(Default)]
struct WordState {
    /// A word has begun (`''` is a word, empty).
    in_word: bool,
    /// The word so far was written with quotes or escapes (`2` before `>`
    /// is a file descriptor only when plain, a name before `=` an
    /// assignment's only so).
    quoted: bool,
    /// The word's first unquoted `=` has been read.
    equals: bool,
    /// ... and the plain text before it is a variable's name.
    assignment: bool,
}

/// The tokens of `line`, or `None` when it holds anything [`Token`] does
/// not stand for.
pub(super) fn tokens(line: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut state = WordState::default();
    let mut chars = line.chars().peekable();
    let end_word = |out: &mut Vec<Token>, word: &mut String, state: &mut WordState| {
        if state.in_word {
            let word = std::mem::take(word);
            out.push(if state.assignment {
                Token::Assignment(word)
            } else {
                Token::Word(word)
            });
        }
        *state = WordState::default();
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut out, &mut word, &mut state),
            '\n' => {
                end_word(&mut out, &mut word, &mut state);
                out.push(Token::Separator);
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            ';' => {
                end_word(&mut out, &mut word, &mut state);
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
                end_word(&mut out, &mut word, &mut state);
                out.push(Token::Separator);
            }
            '|' => {
                end_word(&mut out, &mut word, &mut state);
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
                if !(state.in_word && !state.quoted && word == "2") {
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
                state = WordState::default();
                out.push(Token::StderrRedirect);
            }
            '\'' => {
                state.in_word = true;
                state.quoted = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                state.in_word = true;
                state.quoted = true;
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
                state.quoted = true;
                match chars.next()? {
                    // A line continuation.
                    '\n' => {}
                    c => {
                        state.in_word = true;
                        word.push(c);
                    }
                }
            }
            '$' if chars.peek() == Some(&'(') => return None,
            '<' | '(' | ')' | '`' | '{' | '}' | '\r' => return None,
            c => {
                if c == '=' && !state.equals {
                    state.equals = true;
                    state.assignment = state.in_word && !state.quoted && is_name(&word);
                }
                state.in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut out, &mut word, &mut state);
    Some(out)
}

/// Is `word` a shell variable's name (`[A-Za-z_][A-Za-z0-9_]*`)?
pub(super) fn is_name(word: &str) -> bool {
    let mut bytes = word.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
