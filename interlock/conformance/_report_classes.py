"""Fixed section of ``docs/fidelity.md``: each class of loss the real-traffic audit of issue 11
found, and the tests that drive it through a running gateway with the official SDKs.

``tests/conformance/test_fidelity_classes_doc.py`` checks that every test named here exists
and lives in a module that runs ``interlock serve`` (``tests/gateway/serving.py``) and
imports an official SDK, so the map cannot rot; the runner only prints it with the matrix.
"""

from __future__ import annotations

CLASSES_SECTION = """\
## Real-traffic classes through the gateway

Each class of loss or false rejection found in recorded provider traffic has tests that
send it through a running `interlock serve` with the official SDKs (`openai` for Chat
Completions and Responses, `google-genai`, `anthropic`), streamed and not, and assert what
the client reads from the SDK's own objects. Upstreams are Interlock's emulators, some
replaying streams recorded from the real services (`conformance/corpus/payloads`).

| class | tests |
| --- | --- |
| structured output, every direction (Responses `text.format`, Chat `response_format`, Gemini `responseMimeType` + schema) | `tests/gateway/test_serve_fidelity.py::test_structured_output_reaches_every_upstream`, `tests/gateway/test_serve_fidelity.py::test_the_openai_sdk_parse_works_through_every_upstream`, `tests/gateway/test_serve_fidelity_requests.py::test_structured_output_streamed_reaches_every_upstream_and_the_answer_is_json` |
| every generation setting arrives or is named: temperature, top_p/top_k, max tokens, stop, seed, penalties, `n`/`candidateCount`, logprobs, `safetySettings`, metadata/user, effort ↔ thinking budget, tool choice, parallel tool calls | `tests/gateway/test_serve_fidelity_settings.py::test_every_setting_arrives_or_is_named_streamed_and_not` |
| several candidates and token log-probabilities come back (Chat `n` + `logprobs`/`top_logprobs`, Responses `top_logprobs` + `include`, Gemini `candidateCount` + `responseLogprobs`/`logprobs`); more candidates than a Responses or Anthropic upstream answers are refused; out-of-range settings get the client's error | `tests/gateway/test_serve_fidelity_settings.py::test_candidates_and_token_logprobs_come_back_streamed_and_not`, `tests/gateway/test_serve_fidelity_settings.py::test_several_candidates_from_a_one_candidate_upstream_are_refused_in_the_clients_dialect`, `tests/gateway/test_serve_fidelity_settings.py::test_bad_candidate_and_logprob_settings_get_the_ingress_error`, `tests/gateway/test_serve_fidelity_settings.py::test_bad_settings_in_the_gemini_and_responses_dialects` |
| several choices (`n`) from a Chat upstream | `tests/gateway/test_serve_choices.py::test_a_chat_client_gets_every_streamed_choice`, `tests/gateway/test_serve_choices.py::test_a_chat_client_gets_several_choices_from_a_gemini_upstream`, `tests/gateway/test_serve_choices.py::test_another_dialect_gets_choice_zero` |
| usage in every stream, sent after the finish | `tests/gateway/test_serve_fidelity.py::test_usage_reaches_every_client_streaming_and_not`, `tests/gateway/test_serve_fidelity_streams.py::test_an_openrouter_stream_with_usage_after_its_finish_reaches_every_client`, `tests/gateway/test_serve_vendor_streams.py::test_groq_usage_in_x_groq_reaches_a_responses_client` |
| OpenRouter Chat streams as recorded: the choice repeated with an empty delta after the finish, carrying the usage; a tool call with no `finish_reason` | `tests/gateway/test_serve_fidelity_streams.py::test_an_openrouter_stream_with_usage_after_its_finish_reaches_every_client`, `tests/gateway/test_serve_fidelity_streams.py::test_an_openrouter_tool_call_stream_without_a_finish_reason_reaches_other_clients` |
| OpenRouter `video_url` content parts | `tests/gateway/test_serve_fidelity_requests.py::test_an_openrouter_video_url_reaches_each_upstream_in_its_form` |
| OpenRouter reasoning details of two types under one `index` go back as they came | `tests/gateway/test_serve_fidelity_openrouter.py::test_details_under_one_index_go_back_to_openrouter_as_they_came` |
| `[DONE]` after an OpenRouter Responses stream (recorded, replayed byte for byte) | `tests/gateway/test_serve_fidelity_openrouter.py::test_a_responses_stream_ending_in_done_reaches_every_client` |
| a URL in Chat `file.file_data` | `tests/gateway/test_serve_fidelity_requests.py::test_a_chat_file_data_url_reaches_gemini_as_a_file_uri` |
| one warning per dropped reasoning part of a tool step | `tests/gateway/test_serve_fidelity_requests.py::test_each_dropped_reasoning_part_of_a_tool_step_is_named_once` |
| Azure stream ids and models (an id-less prompt-filter first chunk) | `tests/gateway/test_serve_fidelity_streams.py::test_an_azure_stream_keeps_its_id_and_model_past_the_prompt_filter_chunk` |
| Chat upstreams asked for `stream_options.include_usage` | `tests/gateway/test_serve_fidelity.py::test_a_chat_upstream_is_asked_for_the_usage_chunk_when_streaming` |
| Gemini 2.x histories without thought signatures | `tests/gateway/test_serve_fidelity.py::test_a_gemini_2_history_without_signatures_is_passed_through`, `tests/gateway/test_serve_emulated_signatures.py::test_a_model_configured_or_named_without_signatures_takes_an_unsigned_history` |
| minted item ids never reach a Responses upstream; another provider's reasoning on a finished turn does not block | `tests/gateway/test_serve_switch.py::test_anthropic_gemini_responses_switch_reaches_the_responses_upstream`, `tests/gateway/test_serve_switch.py::test_a_switch_inside_an_unfinished_tool_step_is_still_refused` |
| a Gemini prompt block or safety stop: a content-filter finish in every dialect, never an empty success | `tests/gateway/test_serve_fidelity_answers.py::test_a_prompt_block_is_a_content_filter_finish_never_an_empty_success`, `tests/gateway/test_serve_fidelity_answers.py::test_a_safety_stop_is_a_content_filter_finish` |
| Gemini `executableCode` / `codeExecutionResult`: kept for Gemini clients, no untyped Responses item, `hosted_tool_dropped` for the others | `tests/gateway/test_serve_fidelity_answers.py::test_gemini_code_execution_reaches_every_client_with_its_text_and_said_when_dropped` |
| a tool call without `arguments` | `tests/gateway/test_serve_fidelity_answers.py::test_a_tool_call_without_arguments_reaches_every_client_as_a_call_without_arguments` |
| an in-band stream error (OpenRouter) is one failure, nothing after it | `tests/gateway/test_serve_fidelity_answers.py::test_an_in_band_stream_error_is_one_failure_and_nothing_after_it` |
| an upstream failure (in-band: OpenRouter's integer `code`, OpenAI/Responses/Anthropic/Gemini error events; or an error answer) reaches every client with the status it stands for (a Gemini client: that `code` and its google.rpc `status`, 502 `UNAVAILABLE`) | `tests/gateway/test_serve_upstream_failures.py::test_an_in_band_upstream_failure_is_the_clients_error_with_its_status`, `tests/gateway/test_serve_upstream_failures.py::test_an_upstream_error_answer_is_the_clients_error_with_its_status`, `tests/gateway/test_serve_upstream_failures.py::test_an_openrouter_502_chunk_before_any_content_falls_back` |
| switching models between Responses vendors (OpenAI, xAI, Azure): encrypted reasoning goes back only to its issuer; a finished turn's is dropped with `reasoning_dropped`, a current tool step's refused | `tests/gateway/test_serve_vendors.py::test_reasoning_goes_back_only_to_the_vendor_that_issued_it`, `tests/gateway/test_serve_vendors.py::test_a_switch_of_vendor_inside_an_unfinished_tool_step_is_refused` |
| switching models between Anthropic-compatible vendors (Anthropic, DeepSeek, Moonshot, MiniMax): a thinking signature goes back only to its issuer, for Anthropic and Chat clients; a finished turn's is dropped with `reasoning_dropped`, a current tool step's refused | `tests/gateway/test_serve_anthropic_vendors.py::test_signed_thinking_goes_back_only_to_the_vendor_that_signed_it`, `tests/gateway/test_serve_anthropic_vendors.py::test_a_switch_of_vendor_inside_an_unfinished_tool_step_is_refused`, `tests/gateway/test_serve_anthropic_vendors.py::test_a_chat_client_switches_between_the_two_vendors` |
| Gemini 3 server-side `toolCall` / `toolResponse` | `tests/gateway/test_serve_gemini_wire.py::test_server_side_tool_parts_reach_the_google_genai_client_and_go_back_exactly`, `tests/gateway/test_serve_gemini_wire.py::test_a_responses_client_gets_the_answer_and_no_false_reasoning` |
| citations (Responses `url_citation`, Chat annotations, Gemini grounding, Anthropic citations) | `tests/gateway/test_serve_citations.py::test_a_url_citation_reaches_both_openai_clients_from_both_openai_upstreams`, `tests/gateway/test_serve_grounding.py::test_gemini_grounding_reaches_openai_clients_at_character_offsets`, `tests/gateway/test_serve_grounding.py::test_openai_citations_reach_a_gemini_client_as_grounding_in_bytes`, `tests/gateway/test_serve_answer_warnings.py::test_an_openai_client_reads_a_dropped_document_citation` |
| a provider's hosted tool declared in a request: kept for its provider, refused (strict) or warned (degrade) identically by every other | `tests/gateway/test_serve_fidelity_requests.py::test_a_hosted_tool_reaches_its_provider_and_is_refused_or_warned_by_every_other` |
| another provider's hosted tool in an answer | `tests/gateway/test_serve_answer_warnings.py::test_a_dropped_hosted_tool_call_is_said`, `tests/gateway/test_serve_executed_tools.py::test_a_responses_client_is_told_the_run_was_dropped` |
| Vertex streamed call arguments (`partialArgs`) | `tests/gateway/test_serve_gemini_wire.py::test_streamed_call_arguments_reach_a_chat_client_whole`, `tests/gateway/test_serve_gemini_wire.py::test_streamed_call_arguments_reach_a_google_genai_client` |
| Gemini `tools` as one object (sent as raw HTTP: no SDK writes this shape) | `tests/gateway/test_serve_gemini_wire.py::test_tools_sent_as_one_object_are_read` |
"""
