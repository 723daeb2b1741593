package queue_test

const childEnv = "GOCURATOR_QUEUE_CHILD"

func childMain() int { return 0 }
