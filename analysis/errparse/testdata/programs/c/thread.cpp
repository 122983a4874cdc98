#include <string>
#include <thread>

struct Job {
    std::string name;
};

void run(Job &job) { job.name += " done"; }

int main() {
    Job job{"sync"};
    std::thread worker(run, job);
    worker.join();
    return 0;
}
