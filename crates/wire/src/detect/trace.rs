//! Uncaught exceptions read from the output's end, part of `crash_trace`:
//! runtimes whose report of an exception that ended the program is its
//! frames, below output the program printed first, so that the report's
//! header is neither the first line nor the last.
//!
//! | runtime | report (status) |
//! |---|---|
//! | the JVM (`java A.java`, Kotlin, Scala) | `Exception in thread "main" java.lang.IllegalArgumentException: …` above `\tat A.main(A.java:4)` frames, `Caused by: …` and `\t... 3 more` (1) |
//! | Lua's standalone interpreter | `lua5.4: a.lua:2: attempt to call a nil value (global 'helper')` above `stack traceback:`, tab-indented frames and `\t[C]: in ?` (1); a syntax error's `lua5.4: a.lua:3: 'end' expected …` as the whole output |
//! | Ruby, its output flushed (`$stdout.sync`) | ``a.rb:4:in `run': undefined method `helper' for main:Object (NoMethodError)`` above error_highlight's excerpt and ``\tfrom a.rb:6:in `<main>'`` frames, or as the last line (1); above buffered output it opens the output, the first-line rule's |
//! | PHP | `PHP Fatal error:  Uncaught InvalidArgumentException: … in /a.php:3` (`Fatal error: Uncaught …` on standard output) above `Stack trace:`, `#0 {main}` and `  thrown in /a.php on line 3` (255) |
//! | OCaml | the toplevel's `Exception: Failure "config missing".` (`ocaml a.ml`, 2), a program's `Fatal error: exception Failure("config missing")` (2), as the last line |
//! | escript (Erlang) | `escript: exception error: no match of right hand side value 2` above `  in function  erl_eval:expr/6 (…)` and `  in call from …` frames (127) |
//! | rollup | `[!] RollupError: Could not resolve "./nothere.js" from "a.js"` above the module's name, a code frame and the stack's `    at …` frames (1) |
//! | SQLAlchemy (Python) | a traceback whose exception's message ends with its statement and `(Background on this error at: https://sqlalche.me/e/21/e3q8)` (alembic upgrade, 1) |
//!
//! An exception in another JVM thread does not end the program (`Exception
//! in thread "pool-1-thread-1"`: the first-line rule reads it as the whole
//! output's opening); a trace a program logged itself has none of these
//! headers (`logger.error("…", e)` prints the exception's own line first).

use memchr::memmem;

use super::golang::lines_from_end;
use super::rules::trim_end;

/// How much of the end of the output a JVM trace is read in: its header
/// is above every frame and cause, which are many in a framework's trace.
const JVM_TAIL_BYTES: usize = 16 * 1024;
/// The longest line read as a frame or a header.
const LINE_BYTES: usize = 1024;
/// How far into the last line the interpreter's path is looked for.
const PATH_BYTES: usize = 128;
/// How many lines of error_highlight's excerpt (and blank lines) Ruby
/// prints between its exception's line and its frames.
const RUBY_EXCERPT_LINES: usize = 4;
/// How many lines above `stack traceback:` Lua's message may take.
const LUA_MESSAGE_LINES: usize = 4;
/// How many lines of frames escript prints at most (`in call from …`).
const ERLANG_FRAMES: usize = 64;
/// How many lines rollup prints between its error and the stack: the
/// error's URL, its module and location, the code frame.
const ROLLUP_DETAIL_LINES: usize = 16;
/// How many lines SQLAlchemy's message takes below the exception's line:
/// the statement (`[SQL: …]`, over many lines), its parameters.
const SQL_MESSAGE_LINES: usize = 32;
/// How many lines above an exception's line its last frame's `File`
/// line may be (the frame's source and carets between).
const PYTHON_FRAME_LINES: usize = 4;

/// Does the output end with the report of an uncaught exception that
/// ended a JVM, Lua or PHP program? `last` is the last line without its
/// indentation: most outputs stop at its first byte.
pub(super) fn uncaught_at_end(content: &[u8], window: &[u8], last: &[u8]) -> bool {
    let ruby = match last.last() {
        // `\tfrom a.rb:6:in `<main>'`
        Some(b'\'') => last.starts_with(b"from ") && ruby_frames_at_end(window),
        // `a.rb:2:in `<main>': unknown mode: fast (ArgumentError)` below
        // output (opening it, it is the first-line rule's)
        Some(b')') => {
            ruby_exception(last) && trim_end(super::rules::start(content)).len() != last.len()
        }
        _ => false,
    };
    ruby || match last.first() {
        // `\tat A.main(A.java:4)`, `\t... 3 more`; rollup's stack,
        // `    at /a/rollup.js:24897:26`
        Some(b'a' | b'.') => {
            (jvm_frame(last) && jvm_main_exception(content))
                || (last.starts_with(b"at ") && rollup_error(window))
        }
        // `(Background on this error at: https://sqlalche.me/e/21/e3q8)`
        Some(b'(') => {
            last.starts_with(b"(Background on this error at: ") && sqlalchemy_traceback(window)
        }
        // OCaml's `Exception: Failure "x".`, `Fatal error: exception Not_found`
        Some(b'E' | b'F') => ocaml_exception(last),
        // escript's `  in call from init:do_boot/3 `
        Some(b'i') => {
            (last.starts_with(b"in call from ") || last.starts_with(b"in function "))
                && escript_exception(window)
        }
        // `\t[C]: in ?`
        Some(b'[') => last.starts_with(b"[C]: ") && lua_traceback(window),
        // `  thrown in /a.php on line 3`
        Some(b't') => last.starts_with(b"thrown in ") && php_uncaught(window),
        // `lua5.4: a.lua:3: 'end' expected …`, `/usr/bin/lua5.4: …`
        Some(b'l') => last.starts_with(b"lua") && lua_error_alone(content, last),
        Some(b'/') => {
            // A path's last component: most paths are not Lua's.
            let near = &last[..last.len().min(PATH_BYTES)];
            let program = memchr::memchr(b':', near).map_or(near, |i| &near[..i]);
            let base = memchr::memrchr(b'/', program).map_or(program, |i| &program[i + 1..]);
            base.starts_with(b"lua") && lua_error_alone(content, last)
        }
        _ => false,
    }
}

/// The JVM's report of an exception the main thread did not catch: the
/// last lines are frames (`\tat …`, `\t... N more`), causes (`Caused by:
/// …`) and suppressed exceptions (`\tSuppressed: …`, their frames
/// indented twice), below the header `Exception in thread "main" …`
/// (the default handler's, `ThreadGroup.uncaughtException`).
fn jvm_main_exception(content: &[u8]) -> bool {
    let window = &content[content.len().saturating_sub(JVM_TAIL_BYTES)..];
    let mut lines = lines_from_end(window);
    if !lines.next().is_some_and(jvm_frame) {
        return false;
    }
    for line in lines {
        if line.len() > LINE_BYTES {
            return false;
        }
        if line.starts_with(b"Exception in thread \"main\" ") {
            return true;
        }
        if !(jvm_frame(line)
            || line.starts_with(b"Caused by: ")
            || line.starts_with(b"\tSuppressed: ")
            || line.starts_with(b"\t\tSuppressed: ")
            || line.starts_with(b"\tCaused by: "))
        {
            return false;
        }
    }
    false
}

/// A JVM stack frame line: `\tat pkg.Class.method(File.java:4)` (a
/// suppressed exception's indented once more), `\t... 3 more`.
fn jvm_frame(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\t").unwrap_or(line);
    let line = line.strip_prefix(b"\t").unwrap_or(line);
    if line.starts_with(b"at ") {
        return line.ends_with(b")") && memchr::memchr(b'(', line).is_some();
    }
    line.strip_prefix(b"... ")
        .and_then(|rest| rest.strip_suffix(b" more"))
        .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit))
}

/// Lua's standalone interpreter's report of an error that ended the
/// script (`lua.c`'s `msghandler` and `l_message`): the message after
/// the interpreter's name (`lua5.4: a.lua:2: attempt to call a nil value
/// (global 'helper')`), `stack traceback:`, tab-indented frames, the last
/// one the C entry point (`\t[C]: in ?`; LuaJIT's `\t[C]: at 0x…`). A
/// traceback a script printed itself (`debug.traceback`) has no
/// interpreter's name above it.
fn lua_traceback(window: &[u8]) -> bool {
    let mut lines = lines_from_end(window);
    if !lines.next().is_some_and(|l| l.starts_with(b"\t[C]: ")) {
        return false;
    }
    let mut lines = lines.skip_while(|l| l.first() == Some(&b'\t') && l.len() <= LINE_BYTES);
    if lines.next() != Some(&b"stack traceback:"[..]) {
        return false;
    }
    lines.take(LUA_MESSAGE_LINES).any(lua_message)
}

/// A syntax error Lua's interpreter reports alone, without a traceback
/// (`lua5.4: a.lua:3: 'end' expected (to close 'function' at line 1)
/// near <eof>`, status 1): the whole output, one line.
fn lua_error_alone(content: &[u8], last: &[u8]) -> bool {
    lua_message(last) && trim_end(super::rules::start(content)).len() == last.len()
}

/// A line that opens with Lua's interpreter by name or path (`lua`,
/// `lua5.4`, `/usr/bin/lua5.1`, `luajit`), then `: ` and a chunk's
/// location (`a.lua:2: `, `(command line):1: `, `stdin:1: `).
fn lua_message(line: &[u8]) -> bool {
    let near = &line[..line.len().min(LINE_BYTES)];
    let Some(colon) = memchr::memchr_iter(b':', near).find(|&i| near.get(i + 1) == Some(&b' '))
    else {
        return false;
    };
    let program = &line[..colon];
    let base = program.rsplit(|b| *b == b'/').next().unwrap_or(program);
    let version = base
        .strip_prefix(b"luajit")
        .or_else(|| base.strip_prefix(b"lua"));
    if !version.is_some_and(|v| v.iter().all(|b| b.is_ascii_digit() || *b == b'.')) {
        return false;
    }
    // The chunk's location: `name:line: `.
    let message = &line[colon + 2..];
    let end = memchr::memchr_iter(b':', message).find(|&i| message.get(i + 1) == Some(&b' '));
    end.is_some_and(|end| {
        let at = &message[..end];
        memchr::memrchr(b':', at).is_some_and(|i| {
            let n = &at[i + 1..];
            i > 0 && !n.is_empty() && n.iter().all(u8::is_ascii_digit)
        })
    })
}

/// Ruby's report of an exception nothing rescued, below output the
/// program flushed before it (`$stdout.sync`): the exception's line, error_highlight's
/// excerpt of the failing call (two-space indented, a blank line above),
/// then frames ``\tfrom a.rb:6:in `<main>'`` to the output's end.
fn ruby_frames_at_end(window: &[u8]) -> bool {
    let mut lines =
        lines_from_end(window).skip_while(|l| l.starts_with(b"\tfrom ") && l.len() <= LINE_BYTES);
    for _ in 0..=RUBY_EXCERPT_LINES {
        match lines.next() {
            Some(l) if l.is_empty() || l.starts_with(b"  ") => continue,
            // (below output: opening it, it is the first-line rule's)
            Some(l) => return ruby_exception(l) && lines.next().is_some(),
            None => return false,
        }
    }
    false
}

/// Ruby's line for an exception nothing rescued (`error.c`'s report on
/// exit): ``a.rb:2:in `<main>': unknown mode: fast (ArgumentError)``,
/// `in 'Object#run'` since Ruby 3.4; the class, in parentheses, ends it.
fn ruby_exception(line: &[u8]) -> bool {
    if line.len() > LINE_BYTES || !line.ends_with(b")") {
        return false;
    }
    // The class first: most lines that end with `)` have no ` (Name)`.
    let Some(open) = memchr::memrchr(b'(', line) else {
        return false;
    };
    let class = &line[open + 1..line.len() - 1];
    let is_class = open > 0
        && line[open - 1] == b' '
        && class.first().is_some_and(u8::is_ascii_uppercase)
        && class
            .split(|b| *b == b':')
            .filter(|part| !part.is_empty())
            .all(|part| {
                part[0].is_ascii_uppercase()
                    && part.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
            });
    if !is_class {
        return false;
    }
    // `path:line:in ` and a quoted method, then `': `.
    let head = &line[..open];
    let Some(at) = memchr::memchr_iter(b':', head).find(|&i| head[i + 1..].starts_with(b"in "))
    else {
        return false;
    };
    let path_line = &head[..at];
    let Some(colon) = memchr::memrchr(b':', path_line) else {
        return false;
    };
    let (path, row) = (&path_line[..colon], &path_line[colon + 1..]);
    let method = &head[at + 4..];
    !path.is_empty()
        && !path.iter().any(u8::is_ascii_whitespace)
        && !row.is_empty()
        && row.iter().all(u8::is_ascii_digit)
        && matches!(method.first(), Some(b'`' | b'\''))
        && memchr::memchr_iter(b'\'', &method[1..]).any(|i| method[1 + i..].starts_with(b"': "))
}

/// PHP's report of an exception nothing caught: `PHP Fatal error:
/// Uncaught InvalidArgumentException: … in /a.php:3` (the log's, on
/// stderr; `Fatal error: Uncaught …` on standard output, display_errors),
/// `Stack trace:`, frames `#0 {main}`, and last `  thrown in /a.php on
/// line 3`.
fn php_uncaught(window: &[u8]) -> bool {
    let mut lines = lines_from_end(window);
    let thrown = lines.next().is_some_and(|l| {
        l.starts_with(b"  thrown in ")
            && memchr::memmem::rfind(l, b" on line ").is_some_and(|i| {
                let n = &l[i + 9..];
                !n.is_empty() && n.iter().all(u8::is_ascii_digit)
            })
    });
    if !thrown {
        return false;
    }
    for line in lines {
        if line.len() > LINE_BYTES {
            return false;
        }
        if line.starts_with(b"PHP Fatal error:  Uncaught ")
            || line.starts_with(b"Fatal error: Uncaught ")
        {
            return true;
        }
        let frame = line.first() == Some(&b'#') && line.get(1).is_some_and(u8::is_ascii_digit);
        if !(frame || line == b"Stack trace:") {
            return false;
        }
    }
    false
}

/// OCaml's report of an exception nothing caught, as the last line: the
/// toplevel's (`ocaml a.ml`: `Exception: Failure "config missing".`,
/// `Exception: Not_found.`, status 2) and a compiled program's runtime's
/// (`Fatal error: exception Failure("config missing")`, 2). The
/// exception is a constructor, capitalised (`Stdlib.Exit`), and the
/// toplevel prints its arguments as OCaml values: not a sentence
/// (`Exception: Connection reset.`).
fn ocaml_exception(last: &[u8]) -> bool {
    if let Some(rest) = last.strip_prefix(b"Fatal error: exception ") {
        return rest.first().is_some_and(u8::is_ascii_uppercase);
    }
    let Some(rest) = last
        .strip_prefix(b"Exception: ")
        .and_then(|r| r.strip_suffix(b"."))
    else {
        return false;
    };
    let name = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'\''))
        .count();
    let args = &rest[name..];
    rest.first().is_some_and(u8::is_ascii_uppercase)
        && (args.is_empty()
            || (args[0] == b' '
                && matches!(
                    args.get(1),
                    Some(b'"' | b'(' | b'[' | b'{' | b'-' | b'0'..=b'9')
                )))
}

/// escript's report of an exception that ended the script
/// (`escript.erl`): `escript: exception error: no match of right hand
/// side value 2` (or `exit`, `throw`) above its frames, `  in function
/// erl_eval:expr/6 (…)` and `  in call from …`, to the output's end.
fn escript_exception(window: &[u8]) -> bool {
    let mut lines = lines_from_end(window);
    for _ in 0..=ERLANG_FRAMES {
        let Some(line) = lines.next() else {
            return false;
        };
        if line.len() > LINE_BYTES {
            return false;
        }
        if line.starts_with(b"  in call from ") || line.starts_with(b"  in function ") {
            continue;
        }
        return line
            .strip_prefix(b"escript: exception ")
            .is_some_and(|class| {
                [&b"error: "[..], b"exit: ", b"throw: "]
                    .iter()
                    .any(|c| class.starts_with(c))
            });
    }
    false
}

/// rollup's report of the error that stopped a build (`cli/logging.ts`'s
/// `handleError`, status 1): `[!] RollupError: Could not resolve …` (its
/// warnings are `(!) …`), the error's URL, module and location, the code
/// frame, then the stack's frames `    at …` to the output's end.
fn rollup_error(window: &[u8]) -> bool {
    lines_from_end(window)
        .skip_while(|l| l.len() <= LINE_BYTES && l.trim_ascii_start().starts_with(b"at "))
        .take(ROLLUP_DETAIL_LINES)
        .any(|l| l.len() > 4 && l.starts_with(b"[!] "))
}

/// A Python traceback ending with an SQLAlchemy exception's message,
/// whose last lines are the statement and a pointer to the error's page
/// (`sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such
/// table: jobs`, `[SQL: INSERT INTO jobs VALUES (1)]`, `(Background on
/// this error at: https://sqlalche.me/e/21/e3q8)`): the exception's line
/// is below its last frame (`  File "…", line 1192, in do_execute` and
/// the frame's source), which a `tail` leaves when it cuts the
/// traceback's header off.
fn sqlalchemy_traceback(window: &[u8]) -> bool {
    let mut lines = lines_from_end(window).skip(1).take(SQL_MESSAGE_LINES);
    let exception = lines.by_ref().find(|l| {
        l.len() <= LINE_BYTES
            && l.starts_with(b"sqlalchemy.")
            && memmem::find(l, b"Error: ").is_some()
    });
    exception.is_some()
        && lines
            .take(PYTHON_FRAME_LINES)
            .any(|l| l.starts_with(b"  File \""))
}
