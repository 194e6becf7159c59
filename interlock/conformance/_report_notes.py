"""Fixed sections of ``docs/fidelity.md``: where a gateway client reads what was lost,
which request formats keep citations in a history, and where each request setting goes.

They describe the gateway and the codecs (tested by
``tests/gateway/test_serve_answer_warnings.py``, ``tests/gateway/test_serve_warning_fold.py``,
``tests/gateway/test_stream_losses.py``,
``tests/gateway/test_serve_executed_tools.py``, ``tests/codecs/test_history_citations.py``,
``tests/codecs/test_fields.py``, ``tests/codecs/test_logprobs.py``,
``tests/gateway/test_serve_choices.py``, ``tests/gateway/test_serve_fidelity_settings.py``,
``tests/gateway/test_serve_anthropic_effort.py``, ``tests/codecs/anthropic/test_effort.py`` and
``tests/gateway/test_serve_shared_settings.py``); the
runner only prints them with the matrix.
"""

from __future__ import annotations

WARNINGS_SECTION = """\
## Where a client reads the warnings

A *degraded* cell reaches a client of the gateway as warnings (code, location, message:
`citation_dropped` at `message`, …). The `x-interlock-translation` header names them
(`degraded; citation_dropped at message`), but a stream's headers leave before its answer,
so the answer itself carries them too, where each dialect's official SDK keeps them —
only when there is something to say:

| client dialect | non-streamed answer | streamed answer |
| --- | --- | --- |
| OpenAI Responses | `interlock` member of the response | `interlock` member of the `response` of `response.completed` (or `response.incomplete`) |
| OpenAI Chat Completions | `interlock` member of the completion | `interlock` member of the chunk with the `finish_reason`; with none (OpenRouter ends some streams on `[DONE]` alone), of the last chunk before `[DONE]` (the usage chunk, or one with empty `choices`) |
| Anthropic Messages | `interlock` member of the message | `interlock` member of the `message_delta` event |
| Gemini | `modelStatus.message` ends with `interlock: <label>` | the same, on the last chunk (the one with the `finishReason` when the upstream gave one) |

`interlock` is `{"translation": "<label>", "warnings": [{"code", "location", "message"}]}`;
the `openai` and `anthropic` SDKs keep it in `model_extra` (`response.model_extra["interlock"]`).
`google-genai` drops members it does not know and, for Gemini API answers, reads
`finishMessage` on Vertex AI only: `response.model_status.message` is the field its users
get. It names every warning of the call: those of its request (a history the target could
not carry) and what the answer lost on the way to the client's dialect (the answer, decoded
back in that dialect, holds less of it; a streamed answer's folded updates are checked as a
whole answer is, at its end). Past the first eight of a code, one summary stands for the
rest of that code: `{"code", "location": <the first one left out>, "message": "... and N
more like this", "omitted": N}` (in the label: `N more <code>`):

| code | what the client's dialect has no form for in an answer |
| --- | --- |
| `citation_dropped` | another provider's citation (Anthropic clients); a citation of a request's document (the others) |
| `hosted_tool_dropped` | another provider's server-side tool call or result (e.g. Anthropic's web search; Groq's `executed_tools` runs and `mcp_list_tools` listings for any client but Chat) |
| `hosted_approval_dropped` | a hosted tool's approval request (Responses MCP) |
| `reasoning_dropped` | reasoning text it cannot show (summaries to Chat clients; unsigned reasoning to Anthropic clients) |
| `refusal_as_text` | a refusal (Gemini and Anthropic): it arrives as text |
| `logprobs_dropped` | the log-probabilities of the answer's tokens (Anthropic clients) |
| `candidates_dropped` | candidates after the first (Responses and Anthropic clients: one answer each) |
| `usage_breakdown_dropped` | a per-model usage breakdown (Groq's compound systems, `Usage.breakdown`; any client but Chat; location: `usage`) |
| `vendor_field_dropped` | a Groq `usage_breakdown` / `mcp_list_tools` of another shape than documented, kept verbatim (any client but Chat; location: the field) |

A stream within one dialect is relayed as the upstream sent it and loses nothing on the
way. Operators see the losses in `interlock_answer_warnings_total{dialect,code,streamed}`,
every warning of the requests in `interlock_request_warnings_total{dialect,code,streamed}`,
and the access log's `translation`.
"""

HISTORY_CITATIONS_SECTION = """\
## Citations in a history

The `citation` rows are about the assistant messages of a request. Which request formats
keep their citations:

| target | citations of an assistant message in the history |
| --- | --- |
| `openai_responses` | URL citations kept (`url_citation` annotations) on a message with its item id; dropped on an id-less message (every message from another dialect: ids the gateway gave never reach a Responses upstream) and for a document's citations |
| `anthropic` | Anthropic's own citations kept verbatim (`encrypted_index`, `document_index`); another provider's dropped (it cites only its own search results and documents) |
| `openai_chat` | dropped: request assistant messages have no `annotations` |
| `gemini` | dropped: `Content` has no citation field |
| `agui` | dropped: AG-UI messages carry no citations |

Every drop is a `citation_dropped` warning, never silent; citations cross dialects only in
answers (the `citation_answer` rows).
"""

SETTINGS_SECTION = """\
## Request settings between dialects

The `settings` rows are about these. A setting goes to every upstream dialect with a field
for it; to one without, it is not sent and the call says so (`option_dropped`,
`seed_ignored`, or `field_dropped` / `setting_dropped` naming the wire field):

| setting | Chat | Responses | Gemini | Anthropic |
| --- | --- | --- | --- | --- |
| temperature, top-p | `temperature`, `top_p` | `temperature`, `top_p` | `temperature`, `topP` | `temperature`, `top_p` |
| top-k | — | — | `topK` | `top_k` (whole numbers) |
| output token limit | `max_completion_tokens` / `max_tokens` | `max_output_tokens` | `maxOutputTokens` | `max_tokens` |
| stop sequences | `stop` | — | `stopSequences` | `stop_sequences` |
| seed | `seed` | — | `seed` | — |
| presence / frequency penalty | `presence_penalty`, `frequency_penalty` | — | `presencePenalty`, `frequencyPenalty` | — |
| end-user id | `user` | `user` | — | `metadata.user_id` |
| metadata tags | `metadata` | `metadata` | — | — |
| several candidates | `n` | — (one candidate) | `candidateCount` | — (one candidate) |
| token log-probabilities | `logprobs` | `include: ["message.output_text.logprobs"]` | `responseLogprobs` | — |
| top tokens per position | `top_logprobs` | `top_logprobs` | `logprobs` | — |
| reasoning effort | `reasoning_effort` | `reasoning.effort` | `thinkingConfig.thinkingLevel` (minimal to xhigh) | per model: `output_config.effort`, or a thinking budget |

Several candidates and token log-probabilities come back in the answer, whatever the
client's dialect: Chat `choices[i]` and `choices[i].logprobs.content`, Gemini
`candidates[i]` with `logprobsResult` and `avgLogprobs`, Responses `output_text.logprobs`;
streamed too (Chat chunks by choice `index`, Gemini candidates by `index`, Responses
`response.output_text.delta` `logprobs`). Responses and Anthropic answer one candidate:
asked for more, a strict route refuses with a 400 in the client's dialect
(`candidates_unsupported`) rather than answer one, a `degrade` route sends one with
`option_dropped`; an answer the client's dialect cannot show whole says `candidates_dropped`
or `logprobs_dropped`. The decoders check these settings as the services do (a 400 in the
client's dialect, whatever the upstream): at least one candidate, 0 to 20 top tokens, Chat
`top_logprobs` only with `logprobs: true` (sent to a Chat upstream without it, `top_logprobs`
is not sent: `option_dropped`). Gemini `safetySettings` has no counterpart anywhere else
and gets `field_dropped`.

A reasoning effort reaches an Anthropic upstream the way its model takes it (by model name,
or `effort_levels` per model in the gateway's config): `output_config.effort` at a level
the model has, with adaptive thinking where the model has it (a level it lacks goes as the
nearest one, `reasoning_effort_mapped`); or, on a model that takes only a thinking budget
(and at every other vendor's Anthropic-compatible service), a budget (`low` 2,048,
`medium` 8,192, `high` 16,384 tokens) kept below the client's output token limit
(`reasoning_effort_as_budget`). `none` turns thinking off. A level no dialect names is
refused under strict (`reasoning_effort_unsupported`). An Anthropic client's
`output_config.effort` reaches the other upstreams as their effort field; a level the
Messages API does not name gets the Anthropic client a 400.
"""
