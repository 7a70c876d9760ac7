CREATE TABLE `group_sampling` (
	`group_id` text PRIMARY KEY NOT NULL,
	`min_reward_std` real,
	`replace_flat` text,
	`overlay` text,
	`root_group_id` text NOT NULL,
	`replaces` text,
	`replacement_index` integer DEFAULT 0 NOT NULL,
	`reward_std` real,
	`flat` integer,
	`replaced_by` text,
	`replacement_exhausted` text,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `task_stats` (
	`task_id` text PRIMARY KEY NOT NULL,
	`weight` real NOT NULL,
	`pass_sum` real NOT NULL,
	`reward_sum` real NOT NULL,
	`groups` integer NOT NULL,
	`rollouts` integer NOT NULL,
	`flat_groups` integer NOT NULL,
	`updated_at` integer NOT NULL
);
