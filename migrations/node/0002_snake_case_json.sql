-- Every JSON Polar stores is snake_case (issue 7): rename the camelCase keys that calls written
-- before this migration carry in their request (the pivot chat request), response and notes.
-- Each statement renames one key where it is present; absent keys stay absent.
UPDATE `calls` SET `request` = json_set(`request`, '$.messages', json((SELECT json_group_array(json(CASE WHEN json_type(m.value, '$.toolCalls') IS NULL THEN m.value ELSE json_set(json_remove(m.value, '$.toolCalls'), '$.tool_calls', json(m.value -> '$.toolCalls')) END) ORDER BY m.key) FROM json_each(`calls`.`request`, '$.messages') AS m))) WHERE EXISTS (SELECT 1 FROM json_each(`calls`.`request`, '$.messages') AS m WHERE json_type(m.value, '$.toolCalls') IS NOT NULL);
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(`request`, '$.messages', json((SELECT json_group_array(json(CASE WHEN json_type(m.value, '$.toolCallId') IS NULL THEN m.value ELSE json_set(json_remove(m.value, '$.toolCallId'), '$.tool_call_id', json(m.value -> '$.toolCallId')) END) ORDER BY m.key) FROM json_each(`calls`.`request`, '$.messages') AS m))) WHERE EXISTS (SELECT 1 FROM json_each(`calls`.`request`, '$.messages') AS m WHERE json_type(m.value, '$.toolCallId') IS NOT NULL);
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.toolChoice'), '$.tool_choice', json(`request` -> '$.toolChoice')) WHERE json_type(`request`, '$.toolChoice') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.renderHints'), '$.render_hints', json(`request` -> '$.renderHints')) WHERE json_type(`request`, '$.renderHints') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.sampling.maxTokens'), '$.sampling.max_tokens', json(`request` -> '$.sampling.maxTokens')) WHERE json_type(`request`, '$.sampling.maxTokens') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.sampling.topP'), '$.sampling.top_p', json(`request` -> '$.sampling.topP')) WHERE json_type(`request`, '$.sampling.topP') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.sampling.topK'), '$.sampling.top_k', json(`request` -> '$.sampling.topK')) WHERE json_type(`request`, '$.sampling.topK') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.render_hints.includeUsage'), '$.render_hints.include_usage', json(`request` -> '$.render_hints.includeUsage')) WHERE json_type(`request`, '$.render_hints.includeUsage') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `request` = json_set(json_remove(`request`, '$.render_hints.toolNamespaces'), '$.render_hints.tool_namespaces', json(`request` -> '$.render_hints.toolNamespaces')) WHERE json_type(`request`, '$.render_hints.toolNamespaces') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `response` = json_set(json_remove(`response`, '$.toolCalls'), '$.tool_calls', json(`response` -> '$.toolCalls')) WHERE json_type(`response`, '$.toolCalls') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `response` = json_set(json_remove(`response`, '$.finishReason'), '$.finish_reason', json(`response` -> '$.finishReason')) WHERE json_type(`response`, '$.finishReason') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `response` = json_set(json_remove(`response`, '$.stopSequence'), '$.stop_sequence', json(`response` -> '$.stopSequence')) WHERE json_type(`response`, '$.stopSequence') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `response` = json_set(json_remove(`response`, '$.usage.promptTokens'), '$.usage.prompt_tokens', json(`response` -> '$.usage.promptTokens')) WHERE json_type(`response`, '$.usage.promptTokens') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `response` = json_set(json_remove(`response`, '$.usage.completionTokens'), '$.usage.completion_tokens', json(`response` -> '$.usage.completionTokens')) WHERE json_type(`response`, '$.usage.completionTokens') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `notes` = json_set(json_remove(`notes`, '$.textOnly'), '$.text_only', json(`notes` -> '$.textOnly')) WHERE json_type(`notes`, '$.textOnly') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `notes` = json_set(json_remove(`notes`, '$.tokenCaptureError'), '$.token_capture_error', json(`notes` -> '$.tokenCaptureError')) WHERE json_type(`notes`, '$.tokenCaptureError') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `notes` = json_set(json_remove(`notes`, '$.toolCallParseError'), '$.tool_call_parse_error', json(`notes` -> '$.toolCallParseError')) WHERE json_type(`notes`, '$.toolCallParseError') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `notes` = json_set(json_remove(`notes`, '$.tokenSplice'), '$.token_splice', json(`notes` -> '$.tokenSplice')) WHERE json_type(`notes`, '$.tokenSplice') IS NOT NULL;
--> statement-breakpoint
UPDATE `calls` SET `notes` = json_set(json_remove(`notes`, '$.weightVersion'), '$.weight_version', json(`notes` -> '$.weightVersion')) WHERE json_type(`notes`, '$.weightVersion') IS NOT NULL;
