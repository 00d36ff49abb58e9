-- Nodes a customer asked to remove from a pool with no replacement
-- (DELETE …/nodes/{node}?replace=false): the pool's count is already lower
-- by as many. Every later command for the pool repeats those still observed,
-- so the region drains these nodes rather than shrinking others, and a
-- repeated DELETE of one answers with its Operation instead of lowering the
-- count twice. Names no longer observed are dropped on the next write.
ALTER TABLE node_pools ADD COLUMN removing_nodes text[] NOT NULL DEFAULT '{}';
