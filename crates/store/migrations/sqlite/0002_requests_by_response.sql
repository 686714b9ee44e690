-- The session of a Responses API response, by its id: a continuation
-- (`previous_response_id`) that reaches a gateway which did not see the
-- response (another instance, or this one before a restart) joins the
-- conversation's session. Only Responses rows: the other dialects have no
-- continuations, and pay nothing for this index.
CREATE INDEX requests_response ON requests (response_id)
    WHERE dialect = 'openai-responses' AND response_id IS NOT NULL;
