package timeout

func Wait(done chan struct{}) {
	<-done
}
