"""Scenario suite for goal-directed retrieval."""
