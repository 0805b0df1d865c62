-- expect: boom
error("boom")
