-- The machine type a pool was last moved off: its nodes are replaced one at
-- a time, and until they are, a node the region reports on that type is
-- billed at that type's price (never at another type the region names).
ALTER TABLE node_pools ADD COLUMN replaced_machine_type text;
