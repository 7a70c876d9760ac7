// Why: tests, benches and the node's start-up must tell "no Docker engine here" (skip or fall
// back, saying why) from a failure; one probe answers that, including missing test images.
import Docker from "dockerode";

export type DockerProbe = { ok: true; docker: Docker } | { ok: false; reason: string };

function where(): string {
  return process.env.DOCKER_HOST ?? "the default socket";
}

/** Whether an engine answers (DOCKER_HOST or the default socket) and has these images. */
export async function probeDocker(images: string[] = []): Promise<DockerProbe> {
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (err) {
    return { ok: false, reason: `no Docker engine answers at ${where()} (${(err as Error).message}); run scripts/start-docker.sh` };
  }
  for (const image of images) {
    const found = await docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (!found) return { ok: false, reason: `image ${image} is missing; run scripts/build-test-images.sh` };
  }
  return { ok: true, docker };
}
