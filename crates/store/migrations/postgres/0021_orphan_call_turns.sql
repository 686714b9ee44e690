-- Call turns that no request and no call names any more, deleted once.
-- A turn is written with its response's calls and goes with its request
-- or, since retention deletes the turns of the calls it deletes, with its
-- calls. Before that, retention deleted the calls of a request whose own
-- event had been dropped under overload and left their turn, which then
-- waited for its session to go quiet: for good in a session that never
-- does. Nothing makes such turns now, so the ones left are deleted here
-- (one probe of `requests`' key and of `tool_calls`' `(request_id,
-- call_index)` key per turn). Keep in step with the other backend's 0021.
DELETE FROM call_turns
    WHERE NOT EXISTS (SELECT 1 FROM requests r WHERE r.request_id = call_turns.request_id)
    AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.request_id = call_turns.request_id);
