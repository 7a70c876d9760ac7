CREATE TABLE `rollout_events` (
	`rollout_id` text NOT NULL,
	`seq` integer NOT NULL,
	`from_state` text,
	`to_state` text NOT NULL,
	`at` text NOT NULL,
	`detail` text,
	PRIMARY KEY(`rollout_id`, `seq`),
	FOREIGN KEY (`rollout_id`) REFERENCES `rollouts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `rollout_results` (
	`rollout_id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`status` text NOT NULL,
	`result` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`rollout_id`) REFERENCES `rollouts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `rollout_tasks` (
	`task_id` text PRIMARY KEY NOT NULL,
	`request` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`finished_at` text,
	`callback_done_at` text
);
--> statement-breakpoint
CREATE TABLE `rollouts` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`sample_index` integer NOT NULL,
	`state` text NOT NULL,
	`priority` integer NOT NULL,
	`gateway_session_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `rollout_tasks`(`task_id`) ON UPDATE no action ON DELETE cascade
);
