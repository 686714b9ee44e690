//! Reading a command's input: a file or standard input, bounded in size.

use std::{
    fs::File,
    io::{self, Read},
    path::Path,
};

/// The largest body the commands read (256 MiB): larger inputs get a clear
/// error instead of exhausting memory.
pub const MAX_INPUT: u64 = 256 << 20;

/// Read `path` (or standard input for `-`) whole.
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.display();
    let mut buf = Vec::new();
    let res = if path.as_os_str() == "-" {
        io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut buf)
    } else {
        let file = File::open(path).map_err(|e| format!("{name}: cannot open: {e}"))?;
        if let Ok(meta) = file.metadata()
            && meta.len() > MAX_INPUT
        {
            return Err(format!(
                "{name}: input too large ({} bytes; the limit is {MAX_INPUT})",
                meta.len()
            ));
        }
        file.take(MAX_INPUT + 1).read_to_end(&mut buf)
    };
    res.map_err(|e| format!("{name}: cannot read: {e}"))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(format!("{name}: input too large (over {MAX_INPUT} bytes)"));
    }
    Ok(buf)
}
