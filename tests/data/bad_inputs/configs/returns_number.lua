-- expect: experiment
return 42
