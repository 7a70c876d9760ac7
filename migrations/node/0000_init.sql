CREATE TABLE `calls` (
	`session_id` text NOT NULL,
	`seq` integer NOT NULL,
	`dialect` text NOT NULL,
	`request` text NOT NULL,
	`messages_base_seq` integer,
	`messages_base_len` integer DEFAULT 0 NOT NULL,
	`response` text,
	`prompt_base_seq` integer,
	`prompt_base_len` integer DEFAULT 0 NOT NULL,
	`prompt_suffix` blob,
	`output_ids` blob,
	`logprobs` blob,
	`engine_url` text,
	`policy_version` integer NOT NULL,
	`queued_ms` real NOT NULL,
	`engine_ms` real NOT NULL,
	`total_ms` real NOT NULL,
	`error` text,
	`notes` text,
	`started_at` text NOT NULL,
	PRIMARY KEY(`session_id`, `seq`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL,
	`closed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_hash_unique` ON `sessions` (`token_hash`);