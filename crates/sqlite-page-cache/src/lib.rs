//! SQLite's own page cache (`pcache1`), with the commit's truncation skipped
//! when no page can lie past the database's end (issue 14).
//!
//! At every commit SQLite truncates the cache to the database's size
//! (`pager_end_transaction`). `pcache1` keeps the highest page number it
//! has seen since its last truncation and, when that is more than its hash
//! table's size past the limit, walks every page it holds. B-tree
//! rebalancing (`balance_nonroot`) swaps two pages' numbers through a
//! temporary one, the lock-byte page's (262,145 with 4 KiB pages), so in a
//! database under 1 GiB every commit after a page split walked the whole
//! cache: 2.3 ms a commit by the clock with the gateway's 16 MiB writer
//! cache (3,963 pages) under the soak's load, 0.4–2 % of the gateway's CPU
//! samples there, and 5 % of its CPU at 50 requests/s (BENCHMARKS.md, "The
//! commit's walk of the page cache").
//!
//! The wrapper hands every call to `pcache1` unchanged, and keeps for each
//! cache an upper bound on the page numbers it holds (`bound.rs`); a
//! truncation that the bound shows has nothing to drop is not passed on.
//!
//! [`install`] must run before SQLite's first use in the process (SQLite
//! refuses a new page cache once initialized, and the setting is not safe
//! against another thread initializing SQLite at the same moment);
//! `toolwarden-store` calls it before it opens a SQLite database.

mod bound;

use std::ffi::{c_int, c_uint};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use libsqlite3_sys as ffi;

use crate::bound::Bound;

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// The wrapper is SQLite's page cache in this process.
    Yes,
    /// SQLite was in use already: its default cache stays.
    SqliteInUse,
    /// SQLite refused (its result code): its default cache stays.
    Refused(c_int),
}

/// Truncations passed on to `pcache1` and skipped, since [`install`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub passed: u64,
    pub skipped: u64,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();
/// `pcache1`'s per-cache functions, set once by [`install`] before SQLite
/// can call any wrapper.
static INNER: OnceLock<Inner> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);
static SKIPPED: AtomicU64 = AtomicU64::new(0);

/// Makes the wrapper SQLite's page cache, once per process; later calls
/// answer what the first did.
pub fn install() -> Installed {
    *INSTALLED.get_or_init(install_once)
}

/// The truncations seen so far.
pub fn counts() -> Counts {
    Counts {
        passed: PASSED.load(Ordering::Relaxed),
        skipped: SKIPPED.load(Ordering::Relaxed),
    }
}

/// The default methods' per-cache functions, all present as `pcache1` has
/// them.
struct Inner {
    create: unsafe extern "C" fn(c_int, c_int, c_int) -> *mut ffi::sqlite3_pcache,
    cachesize: unsafe extern "C" fn(*mut ffi::sqlite3_pcache, c_int),
    pagecount: unsafe extern "C" fn(*mut ffi::sqlite3_pcache) -> c_int,
    fetch: unsafe extern "C" fn(
        *mut ffi::sqlite3_pcache,
        c_uint,
        c_int,
    ) -> *mut ffi::sqlite3_pcache_page,
    unpin: unsafe extern "C" fn(*mut ffi::sqlite3_pcache, *mut ffi::sqlite3_pcache_page, c_int),
    rekey: unsafe extern "C" fn(
        *mut ffi::sqlite3_pcache,
        *mut ffi::sqlite3_pcache_page,
        c_uint,
        c_uint,
    ),
    truncate: unsafe extern "C" fn(*mut ffi::sqlite3_pcache, c_uint),
    destroy: unsafe extern "C" fn(*mut ffi::sqlite3_pcache),
    shrink: unsafe extern "C" fn(*mut ffi::sqlite3_pcache),
}

impl Inner {
    fn of(m: &ffi::sqlite3_pcache_methods2) -> Option<Inner> {
        Some(Inner {
            create: m.xCreate?,
            cachesize: m.xCachesize?,
            pagecount: m.xPagecount?,
            fetch: m.xFetch?,
            unpin: m.xUnpin?,
            rekey: m.xRekey?,
            truncate: m.xTruncate?,
            destroy: m.xDestroy?,
            shrink: m.xShrink?,
        })
    }
}

fn inner() -> &'static Inner {
    // `install` sets `INNER` before SQLite can call any wrapper.
    INNER
        .get()
        .expect("the page cache wrapper runs only once installed")
}

/// One cache: `pcache1`'s, and the bound on its page numbers. SQLite uses a
/// cache from one connection at a time, so the bound needs no lock.
struct Cache {
    inner: *mut ffi::sqlite3_pcache,
    bound: Bound,
}

fn install_once() -> Installed {
    let mut current = std::mem::MaybeUninit::<ffi::sqlite3_pcache_methods2>::zeroed();
    // SAFETY: `SQLITE_CONFIG_GETPCACHE2` takes one pointer to a
    // `sqlite3_pcache_methods2` and writes the current methods there (the
    // default ones if none were set); before initialization it is allowed,
    // after it SQLite answers `SQLITE_MISUSE` and writes nothing.
    let rc = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETPCACHE2, current.as_mut_ptr()) };
    if rc == ffi::SQLITE_MISUSE {
        return Installed::SqliteInUse;
    }
    if rc != ffi::SQLITE_OK {
        return Installed::Refused(rc);
    }
    // SAFETY: SQLite wrote the whole struct (zeroed before, so any field it
    // left is a null pointer, a valid `None`).
    let current = unsafe { current.assume_init() };
    let Some(inner) = Inner::of(&current).filter(|_| current.iVersion >= 1) else {
        return Installed::Refused(ffi::SQLITE_ERROR);
    };
    let ours = ffi::sqlite3_pcache_methods2 {
        iVersion: 1,
        pArg: current.pArg,
        xInit: current.xInit,
        xShutdown: current.xShutdown,
        xCreate: Some(create),
        xCachesize: Some(cachesize),
        xPagecount: Some(pagecount),
        xFetch: Some(fetch),
        xUnpin: Some(unpin),
        xRekey: Some(rekey),
        xTruncate: Some(truncate),
        xDestroy: Some(destroy),
        xShrink: Some(shrink),
    };
    if INNER.set(inner).is_err() {
        return Installed::Refused(ffi::SQLITE_ERROR);
    }
    // SAFETY: `SQLITE_CONFIG_PCACHE2` takes one pointer to a
    // `sqlite3_pcache_methods2` and copies it; every function in it is
    // defined below with SQLite's signatures, and `INNER` holds the
    // default methods they hand calls to.
    let rc = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_PCACHE2, &ours as *const _) };
    match rc {
        ffi::SQLITE_OK => Installed::Yes,
        ffi::SQLITE_MISUSE => Installed::SqliteInUse,
        rc => Installed::Refused(rc),
    }
}

/// The wrapper's cache behind SQLite's handle.
///
/// # Safety
/// `p` is a handle [`create`] returned and [`destroy`] has not freed, used
/// by one connection at a time (SQLite's contract for a page cache).
unsafe fn cache<'a>(p: *mut ffi::sqlite3_pcache) -> &'a mut Cache {
    // SAFETY: per the function's contract, `p` is a live `Box<Cache>`'s
    // pointer that no other thread uses meanwhile.
    unsafe { &mut *p.cast::<Cache>() }
}

unsafe extern "C" fn create(
    sz_page: c_int,
    sz_extra: c_int,
    purgeable: c_int,
) -> *mut ffi::sqlite3_pcache {
    // SAFETY: SQLite's own `xCreate`, with SQLite's arguments.
    let inner = unsafe { (inner().create)(sz_page, sz_extra, purgeable) };
    if inner.is_null() {
        return inner;
    }
    Box::into_raw(Box::new(Cache {
        inner,
        bound: Bound::default(),
    }))
    .cast()
}

unsafe extern "C" fn cachesize(p: *mut ffi::sqlite3_pcache, n: c_int) {
    // SAFETY: SQLite passes a handle `create` made; its inner handle goes
    // to the function that made it.
    unsafe { (inner().cachesize)(cache(p).inner, n) }
}

unsafe extern "C" fn pagecount(p: *mut ffi::sqlite3_pcache) -> c_int {
    // SAFETY: as in `cachesize`.
    unsafe { (inner().pagecount)(cache(p).inner) }
}

unsafe extern "C" fn fetch(
    p: *mut ffi::sqlite3_pcache,
    key: c_uint,
    create_flag: c_int,
) -> *mut ffi::sqlite3_pcache_page {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    // SAFETY: SQLite's `xFetch` on its own handle, with SQLite's arguments.
    let page = unsafe { (inner().fetch)(c.inner, key, create_flag) };
    if create_flag != 0 && !page.is_null() {
        c.bound.fetched(key);
    }
    page
}

unsafe extern "C" fn unpin(
    p: *mut ffi::sqlite3_pcache,
    page: *mut ffi::sqlite3_pcache_page,
    discard: c_int,
) {
    // SAFETY: as in `cachesize`; the page is the inner cache's own.
    unsafe { (inner().unpin)(cache(p).inner, page, discard) }
}

unsafe extern "C" fn rekey(
    p: *mut ffi::sqlite3_pcache,
    page: *mut ffi::sqlite3_pcache_page,
    old: c_uint,
    new: c_uint,
) {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    // SAFETY: SQLite's `xRekey` on its own handle and page.
    unsafe { (inner().rekey)(c.inner, page, old, new) };
    c.bound.renamed(old, new);
}

unsafe extern "C" fn truncate(p: *mut ffi::sqlite3_pcache, limit: c_uint) {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    if !c.bound.may_hold_from(limit) {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    PASSED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: SQLite's `xTruncate` on its own handle.
    unsafe { (inner().truncate)(c.inner, limit) };
    c.bound.truncated(limit);
}

unsafe extern "C" fn destroy(p: *mut ffi::sqlite3_pcache) {
    // SAFETY: SQLite destroys a handle `create` made, once, and never
    // uses it after: the box is taken back and its inner cache destroyed.
    let c = unsafe { Box::from_raw(p.cast::<Cache>()) };
    // SAFETY: SQLite's `xDestroy` on its own handle, once.
    unsafe { (inner().destroy)(c.inner) }
}

unsafe extern "C" fn shrink(p: *mut ffi::sqlite3_pcache) {
    // SAFETY: as in `cachesize`.
    unsafe { (inner().shrink)(cache(p).inner) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite in this test's process is first used here, so the wrapper is
    /// installed; a database written through it reads back whole, and the
    /// commits after page splits skip their truncation.
    #[test]
    fn a_database_written_through_the_wrapper_reads_back_whole() {
        assert_eq!(install(), Installed::Yes);
        assert_eq!(install(), Installed::Yes, "later calls answer the same");
        let dir = std::env::temp_dir().join(format!("tw-pcache-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("t.db");
        let _ = std::fs::remove_file(&path);
        let db = Db::open(&path);
        db.exec(
            "PRAGMA journal_mode=WAL; PRAGMA cache_size=-16384; \
                 CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID; \
                 CREATE INDEX t_v ON t (v);",
        );
        let before = counts();
        // Random keys: inserts land all over both B-trees and split their
        // pages, each split swapping numbers through the lock-byte page.
        for txn in 0..50u64 {
            let mut sql = String::from("BEGIN;");
            for i in 0..200u64 {
                let k = (txn * 200 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                sql.push_str(&format!(
                    "INSERT INTO t VALUES ('{k:016x}', randomblob(100));"
                ));
            }
            sql.push_str("COMMIT;");
            db.exec(&sql);
        }
        // A rolled-back transaction that grew the file: its new pages are
        // past the database's end and must go.
        db.exec("BEGIN; INSERT INTO t SELECT k || 'x', v FROM t; ROLLBACK;");
        let after = counts();
        assert!(after.skipped > before.skipped, "{before:?} → {after:?}");
        assert!(after.passed > before.passed, "{before:?} → {after:?}");
        assert_eq!(db.one("SELECT count(*) FROM t"), "10000");
        assert_eq!(db.one("PRAGMA integrity_check"), "ok");
        drop(db);
        let db = Db::open(&path);
        assert_eq!(db.one("SELECT count(*) FROM t"), "10000");
        assert_eq!(db.one("PRAGMA integrity_check"), "ok");
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A raw SQLite connection, enough for the test.
    struct Db(*mut ffi::sqlite3);

    impl Db {
        fn open(path: &std::path::Path) -> Db {
            let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            let mut db = std::ptr::null_mut();
            // SAFETY: a NUL-terminated name and a pointer to write the handle to.
            let rc = unsafe { ffi::sqlite3_open(name.as_ptr(), &mut db) };
            assert_eq!(rc, ffi::SQLITE_OK);
            Db(db)
        }

        fn exec(&self, sql: &str) {
            let sql = std::ffi::CString::new(sql).unwrap();
            // SAFETY: an open handle and a NUL-terminated statement list.
            let rc = unsafe {
                ffi::sqlite3_exec(
                    self.0,
                    sql.as_ptr(),
                    None,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(rc, ffi::SQLITE_OK, "{sql:?}");
        }

        /// The first column of the first row, as text.
        fn one(&self, sql: &str) -> String {
            let sql = std::ffi::CString::new(sql).unwrap();
            let mut stmt = std::ptr::null_mut();
            // SAFETY: an open handle, a NUL-terminated statement and a
            // pointer to write the statement's handle to.
            let rc = unsafe {
                ffi::sqlite3_prepare_v2(self.0, sql.as_ptr(), -1, &mut stmt, std::ptr::null_mut())
            };
            assert_eq!(rc, ffi::SQLITE_OK);
            // SAFETY: a prepared statement, stepped once, its text copied
            // out before it is finalized.
            unsafe {
                assert_eq!(ffi::sqlite3_step(stmt), ffi::SQLITE_ROW);
                let text = std::ffi::CStr::from_ptr(ffi::sqlite3_column_text(stmt, 0).cast())
                    .to_string_lossy()
                    .into_owned();
                ffi::sqlite3_finalize(stmt);
                text
            }
        }
    }

    impl Drop for Db {
        fn drop(&mut self) {
            // SAFETY: the handle `open` made, closed once.
            unsafe { ffi::sqlite3_close(self.0) };
        }
    }
}
