"""Fleet memory: robots share what they learn through PostgreSQL with pgvector.

ROS-free. Off unless configured (:class:`FleetConfig`); the robot's SQLite stays the
source of truth and Store / Retrieve never depend on the fleet. docs/fleet.md.
"""
