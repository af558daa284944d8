"""Paper 002's planners, one module each: preplanner, position, trajectory, accident, temporal;
``plan.plan_accident`` runs them in 002's order (Figure 4)."""
