//! Batch sizes across the SQLite writer's statement shapes, on both backends.

use toolwarden_store::*;

use crate::support::*;

/// Batches of many sizes, across the SQLite writer's statement shapes (1,
/// 4, 16, 64 and 256 rows, and past 256 several statements): each kind of
/// row is written exactly once, a resent batch is all duplicates, and late
/// calls complete their results' rows. Largest first, so a shape runs full
/// and then padded.
pub async fn batch_sizes(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let mut total_requests = 0;
    for n in [1500usize, 300, 17, 5, 3, 1, 0] {
        // Ids shorter than 12 bytes: matched within their session only.
        let id = |what: &str, i: usize| format!("n{n}-{what}{i}");
        let (tool, orphan_tool, defect) = (format!("t{n}"), format!("o{n}"), format!("d{n}"));
        let at = 1_000_000 * n as i64;
        let mut first = Vec::new();
        for i in 0..n {
            let (r, s) = (id("r", i), id("s", i));
            let Event::Request(mut req) = request(&r, &s, at) else {
                unreachable!()
            };
            req.repairs = vec![defect.clone()];
            first.push(Event::Request(req));
            first.push(Event::ToolCall(call(&r, &s, 0, &id("c", i), &tool, at)));
            first.push(Event::ToolResult(result(
                &r,
                &s,
                &id("c", i),
                1,
                None,
                i % 3 == 0,
                at + 10,
            )));
            first.push(Event::ToolResult(result(
                &r,
                &s,
                &id("o", i),
                2,
                Some(&orphan_tool),
                false,
                at + 10,
            )));
        }
        let (counters, seen) = record_one_batch(&store, &first).await;
        assert_eq!(
            (counters.events_written, counters.write_errors),
            (4 * n as u64, 0),
            "n={n}"
        );
        assert_eq!(seen.calls.lock().unwrap().len(), n, "n={n}");
        let results = seen.results.lock().unwrap().clone();
        let named = |t: &str| results.iter().filter(|(_, x)| x == t).count();
        assert_eq!(
            (results.len(), named(&tool), named(&orphan_tool)),
            (2 * n, n, n),
            "n={n}"
        );

        // The same batch again, plus the calls of the orphan results.
        let mut second = first.clone();
        for i in 0..n {
            second.push(Event::ToolCall(call(
                &id("q", i),
                &id("s", i),
                0,
                &id("o", i),
                &orphan_tool,
                at + 5,
            )));
        }
        let (counters, seen) = record_one_batch(&store, &second).await;
        assert_eq!(
            (counters.events_written, counters.write_errors),
            (5 * n as u64, 0),
            "n={n}"
        );
        assert_eq!(seen.calls.lock().unwrap().len(), n, "late calls, n={n}");
        assert!(seen.results.lock().unwrap().is_empty(), "n={n}");

        total_requests += n as u64;
        let stats = store.stats(&all()).await.unwrap();
        let tool_row = |t: &str| {
            stats
                .tools
                .iter()
                .find(|r| r.tool == t)
                .map(|r| (r.calls, r.failures))
        };
        let expect =
            |calls: usize, failures: usize| (n > 0).then_some((calls as u64, failures as u64));
        assert_eq!(tool_row(&tool), expect(n, n.div_ceil(3)), "n={n}");
        assert_eq!(tool_row(&orphan_tool), expect(n, 0), "n={n}");
        assert_eq!(stats.requests.total, total_requests, "n={n}");
        let repairs = stats.repairs.iter().find(|r| r.defect == defect);
        assert_eq!(repairs.map(|r| r.count), expect(n, 0).map(|e| e.0), "n={n}");
        if n > 0 {
            let last = store.session_calls(&id("s", n - 1)).await.unwrap();
            let rows: Vec<_> = last
                .iter()
                .map(|r| {
                    (
                        r.call_id.clone(),
                        r.request_id.clone(),
                        r.result_at_ms,
                        r.exec_ms,
                    )
                })
                .collect();
            assert_eq!(rows.len(), 2, "{rows:?}");
            assert!(
                rows.contains(&(
                    id("c", n - 1),
                    Some(id("r", n - 1)),
                    Some(at + 10),
                    Some(10.0)
                )),
                "{rows:?}"
            );
            assert!(
                rows.contains(&(
                    id("o", n - 1),
                    Some(id("q", n - 1)),
                    Some(at + 10),
                    Some(5.0)
                )),
                "{rows:?}"
            );
        }
    }
}
