CREATE TABLE `groups` (
	`id` text PRIMARY KEY NOT NULL,
	`trainer_id` text,
	`task_id` text NOT NULL,
	`request` text NOT NULL,
	`n` integer NOT NULL,
	`early_stop_min_usable` integer,
	`advantages` text NOT NULL,
	`callback_url` text,
	`state` text NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `groups_task_id` ON `groups` (`task_id`);--> statement-breakpoint
CREATE INDEX `groups_state` ON `groups` (`state`);--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `results` (
	`rollout_id` text PRIMARY KEY NOT NULL,
	`group_id` text NOT NULL,
	`trainer_id` text,
	`status` text NOT NULL,
	`reward` real,
	`session` text NOT NULL,
	`policy_version_started` integer NOT NULL,
	`stale` integer NOT NULL,
	`created_at` integer NOT NULL,
	`acked_at` integer,
	FOREIGN KEY (`rollout_id`) REFERENCES `rollouts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `results_unacked` ON `results` (`trainer_id`,`acked_at`);--> statement-breakpoint
CREATE TABLE `rollouts` (
	`id` text PRIMARY KEY NOT NULL,
	`group_id` text NOT NULL,
	`idx` integer NOT NULL,
	`seq` integer NOT NULL,
	`state` text NOT NULL,
	`priority` integer NOT NULL,
	`image` text NOT NULL,
	`node_id` text,
	`attempt` integer DEFAULT 0 NOT NULL,
	`policy_version_started` integer,
	`cause` text,
	`created_at` integer NOT NULL,
	`assigned_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rollouts_state` ON `rollouts` (`state`);--> statement-breakpoint
CREATE INDEX `rollouts_group` ON `rollouts` (`group_id`);