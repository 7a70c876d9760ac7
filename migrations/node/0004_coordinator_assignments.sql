CREATE TABLE `coordinator_assignments` (
	`rollout_id` text PRIMARY KEY NOT NULL,
	`coordinator_rollout_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`group_id` text NOT NULL,
	`task_id` text NOT NULL,
	`acked_at` text,
	FOREIGN KEY (`rollout_id`) REFERENCES `rollouts`(`id`) ON UPDATE no action ON DELETE cascade
);
