-- A rollout's state is spelled as the node and trainers spell a result's status (COMPLETED, not completed).
UPDATE `rollouts` SET `state` = upper(`state`) WHERE `state` IN ('queued', 'assigned', 'completed', 'error', 'timeout', 'cancelled');
