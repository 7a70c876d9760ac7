CREATE TABLE `result_traces` (
	`rollout_id` text PRIMARY KEY NOT NULL,
	`traces` blob NOT NULL,
	FOREIGN KEY (`rollout_id`) REFERENCES `results`(`rollout_id`) ON UPDATE no action ON DELETE cascade
);
